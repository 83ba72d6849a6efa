package main

import (
	"syscall"
	"unsafe"
)

type iovec = syscall.Iovec

// writevNonBlocking writes bufs to the socket in one writev without waiting: n bytes went
// out (0 when the socket's buffer is full).
func writevNonBlocking(rc syscall.RawConn, bufs [][]byte, iov *[]iovec) (n int, err error) {
	v := (*iov)[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		e := syscall.Iovec{Base: &b[0]}
		e.SetLen(len(b))
		v = append(v, e)
	}
	*iov = v
	if len(v) == 0 {
		return 0, nil
	}
	var errno syscall.Errno
	cerr := rc.Write(func(fd uintptr) bool {
		r, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)))
		n, errno = int(r), e
		return true
	})
	clear(v)
	switch {
	case cerr != nil:
		return 0, cerr
	case errno == syscall.EAGAIN, errno == syscall.EINTR:
		return 0, nil
	case errno != 0:
		return 0, errno
	}
	return n, nil
}

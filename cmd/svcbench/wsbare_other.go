//go:build !linux

package main

import (
	"errors"
	"syscall"
)

type iovec struct{}

// writevNonBlocking is Linux only (svcbench ws measures on Linux).
func writevNonBlocking(syscall.RawConn, [][]byte, *[]iovec) (int, error) {
	return 0, errors.New("svcbench ws: the bare broadcaster needs Linux")
}

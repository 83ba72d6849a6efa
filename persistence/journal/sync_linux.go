package journal

import (
	"os"
	"syscall"
)

// datasync flushes f's data and the metadata needed to read it (its size).
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// lockDir takes an exclusive advisory lock on f so that two processes never
// write one journal.
func lockDir(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

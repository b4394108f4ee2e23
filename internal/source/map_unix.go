//go:build unix

package source

import (
	"os"
	"syscall"
)

// mapRegular maps a large regular file read-only. The pages are the
// kernel's page cache, not the Go heap: the garbage collector neither
// scans them nor counts them toward its goal, which for a 100 MB file is
// the difference between holding it once and holding it about twice. The
// returned release drops the pages from the process (MADV_DONTNEED) but
// keeps the mapping, so that a string that still points into it reads
// the file again instead of faulting.
func mapRegular(f *os.File, size int64) ([]byte, func(), bool) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }, true
}

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
// returned release(n) drops the whole pages of the first n bytes from the
// process (MADV_DONTNEED) but keeps the mapping, so that a string that
// still points into it reads the file again instead of faulting.
func mapRegular(f *os.File, size int64) ([]byte, func(n int), bool) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, false
	}
	page := os.Getpagesize()
	return data, func(n int) {
		if n = min(n, len(data)) / page * page; n > 0 {
			_ = syscall.Madvise(data[:n], syscall.MADV_DONTNEED)
		}
	}, true
}

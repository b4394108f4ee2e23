//go:build !unix

package source

import "os"

func mapRegular(*os.File, int64) ([]byte, func(int), bool) { return nil, nil, false }

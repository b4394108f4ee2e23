//go:build !unix

package source

import "os"

func mapRegular(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }

package render_test

import "fmt"

var fmtSscan = fmt.Sscan

package layout

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// Stdin is the path that names standard input, and StdinName the file name
// its diagnostics carry.
const (
	Stdin     = "-"
	StdinName = "<stdin>"
)

// Load reads and parses a layout file; "-" reads os.Stdin. The error is
// for a file that cannot be read at all (a usage problem); problems with
// its content are diagnostics.
func Load(path string) (*Layout, *diag.List, error) {
	return LoadFrom(path, os.Stdin)
}

// LoadFrom is Load with standard input given: path "-" reads stdin, any
// other path a regular file. Anything else (a directory, a named pipe, a
// device, a socket) is refused before it is opened, since opening a pipe
// with no writer would wait forever.
func LoadFrom(path string, stdin io.Reader) (*Layout, *diag.List, error) {
	file, data, err := ReadInput(path, "layout", stdin)
	if err != nil {
		return nil, nil, err
	}
	l, d := Parse(file, data)
	return l, d, nil
}

// ReadInput reads path as LoadFrom does, "-" from stdin, and returns the
// file name its diagnostics carry (StdinName for "-"); what names the
// input in the error ("layout", "spec").
func ReadInput(path, what string, stdin io.Reader) (file string, data []byte, err error) {
	if path == Stdin {
		data, err := readLimited(stdin)
		if err != nil {
			return "", nil, fmt.Errorf("read %s from standard input: %w", what, err)
		}
		return StdinName, data, nil
	}
	data, err = ReadRegular(path, what)
	if err != nil {
		return "", nil, err
	}
	return path, data, nil
}

// ReadRegular reads a regular file (OpenRegular) of at most one byte past
// MaxFileSize; what names the input in the error ("layout", "spec").
func ReadRegular(path, what string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	data, err := readLimited(f)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return data, nil
}

// readLimited reads one byte past MaxFileSize, so that Parse can tell the
// input is too big without this process ever holding more than that.
func readLimited(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxFileSize+1))
}

// OpenRegular opens a regular file for reading. Anything else (a
// directory, a named pipe, a device, a socket) is refused before it is
// opened, since opening a pipe with no writer would wait forever; the
// error names what it is. Every file mimoplan reads by name goes through
// it.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The file may have been replaced between Stat and Open.
	if st2, err := f.Stat(); err != nil || !os.SameFile(st, st2) {
		f.Close()
		return nil, fmt.Errorf("%s: the file changed while it was opened", path)
	}
	return f, nil
}

// regular refuses what is not a regular file, naming what it is.
func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "is a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "is a named pipe (FIFO), not a regular file; pipe it to standard input with '-' instead"
	case m&fs.ModeSocket != 0:
		what = "is a socket, not a regular file"
	case m&fs.ModeDevice != 0:
		what = "is a device, not a regular file"
	}
	return fmt.Errorf("%s %s", path, what)
}

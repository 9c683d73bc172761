// Package exitcode names mimoplan's exit codes and carries one up to main
// inside an error, so that a package below the commands can say "this is
// the user's mistake" (exit 2) or "the input is invalid" (exit 1) without
// knowing about the command line.
package exitcode

import (
	"errors"
	"fmt"
)

// Exit codes, as the README documents them.
const (
	OK      = 0
	Invalid = 1 // the input (layout, plan, host list) is invalid
	Usage   = 2 // bad flag, unreadable file
	NoGPU   = 3 // NVML or a driver is missing
)

// Error carries an exit code. A nil Err means the command already printed
// what it had to say.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage error (exit 2) with a formatted message.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Wrap gives err the exit code code; a nil err stays nil.
func Wrap(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Silent ends a command with code after its output was written; OK is nil.
func Silent(code int) error {
	if code == OK {
		return nil
	}
	return &Error{Code: code}
}

// Of returns the exit code err carries, and whether it carries one.
func Of(err error) (int, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

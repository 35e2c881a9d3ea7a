package main

// ExitError is a command's failure with its exit status: 1 for an answer
// that is "no" (a refused URL, a failed verification), where 2 means the
// command could not run.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

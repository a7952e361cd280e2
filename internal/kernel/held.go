package kernel

import "github.com/slotlimit/slotlimit/internal/callerr"

// Held reads the reply of a script that answers with a status alone, as
// a bare integer: 1 when the caller holds what it names (or held it and
// freed it), 0 when it does not. Any other status is an unexpected reply.
// It passes err on.
func Held(status int64, err error) (bool, error) {
	switch {
	case err != nil:
		return false, err
	case status != 0 && status != 1:
		return false, callerr.UnexpectedReply(status)
	}
	return status == 1, nil
}

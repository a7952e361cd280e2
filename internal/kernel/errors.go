package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// ErrOutcomeUnknown is the one value that every package exports under its
// own name (see callerr.OutcomeUnknown for what matches it).
var ErrOutcomeUnknown = callerr.ErrOutcomeUnknown

// Errors is the error set of one package. Its sentinels are the values
// the package exports: ErrInvalidConfig = errs.InvalidConfig, and so on.
// Every error of a call wraps one of them, or an error of the package's
// own, and names the package once, the method and the key:
// `lock: refresh "orders:42": not held`.
type Errors struct {
	pkg string

	InvalidConfig   error // "<pkg>: invalid config"
	InvalidArgument error // "<pkg>: invalid argument"
	NotHeld         error // "<pkg>: not held"
	NotReplicated   error // "<pkg>: write not acknowledged by enough replicas"

	nilContext error
}

// NewErrors returns the error set of package pkg.
func NewErrors(pkg string) *Errors {
	e := &Errors{
		pkg:             pkg,
		InvalidConfig:   errors.New(pkg + ": invalid config"),
		InvalidArgument: errors.New(pkg + ": invalid argument"),
		NotHeld:         errors.New(pkg + ": not held"),
		NotReplicated:   errors.New(pkg + ": write not acknowledged by enough replicas"),
	}
	e.nilContext = e.Argument("nil context")
	return e
}

// Package returns the name of the package whose errors e makes.
func (e *Errors) Package() string { return e.pkg }

// Config returns an error of New that matches InvalidConfig and says what
// is wrong, as `lock: invalid config: Key is empty`.
func (e *Errors) Config(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{e.InvalidConfig}, args...)...)
}

// Argument returns an error that matches InvalidArgument and says what is
// wrong with the argument.
func (e *Errors) Argument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{e.InvalidArgument}, args...)...)
}

// Kind returns a sentinel of its own for one kind of bad input, such as
// ErrInvalidHolder, whose text is the package's name and text and which
// matches InvalidArgument.
func (e *Errors) Kind(text string) error {
	return &kindError{text: e.pkg + ": " + text, of: e.InvalidArgument}
}

// A kindError is a sentinel that also matches the sentinel of.
type kindError struct {
	text string
	of   error
}

func (k *kindError) Error() string        { return k.text }
func (k *kindError) Is(target error) bool { return target == k.of }

// Op returns err, from method on key, named as every error of a call is:
// `lock: refresh "orders:42": not held`. Use it for errors returned before
// anything is sent, and for answers: a refusal, a reply that says the
// caller holds nothing. It wraps err.
func (e *Errors) Op(method, key string, err error) error {
	return callerr.Op(e.pkg, Words(method), key, err)
}

// Call returns err, from a call of method on key that was sent with ctx,
// named as Op names it. It matches ErrOutcomeUnknown when err leaves the
// outcome unknown, and then also ctx.Err() when ctx has ended (see
// callerr.Call). A nil err gives nil.
func (e *Errors) Call(ctx context.Context, method, key string, err error) error {
	if err == nil {
		return nil
	}
	return callerr.Call(ctx, e.pkg, Words(method), key, err)
}

// Check returns the error of a call of method made with ctx on a value
// that usable says was made by New, or nil when the call may go on: a
// value not made by New gives `lock: refresh: invalid config: not made by
// New`, which names no key, and a nil ctx `lock: refresh "k": invalid
// argument: nil context`. Every method calls it first, so that neither
// sends anything.
func (e *Errors) Check(ctx context.Context, usable bool, method, key string) error {
	switch {
	case !usable:
		return callerr.Method(e.pkg, Words(method), e.Config("not made by New"))
	case ctx == nil:
		return e.Op(method, key, e.nilContext)
	}
	return nil
}

// Words returns a Go method's name as the words an error names it by:
// "TryAcquire" gives "try acquire". The words of each name are made once,
// so that an error costs no allocation and no lock for them.
func Words(method string) string {
	if w, ok := (*wordsOf.Load())[method]; ok {
		return w
	}
	w := toWords(method)
	wordsMu.Lock()
	defer wordsMu.Unlock()
	next := maps.Clone(*wordsOf.Load())
	next[method] = w
	wordsOf.Store(&next)
	return w
}

// wordsOf holds the words of each method name Words has seen, the
// module's methods, a set of a few dozen: a map that is never changed,
// replaced by a larger one under wordsMu when a name is new.
var (
	wordsMu sync.Mutex
	wordsOf atomic.Pointer[map[string]string]
)

func init() { wordsOf.Store(&map[string]string{}) }

func toWords(method string) string {
	var b strings.Builder
	for i, r := range method {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

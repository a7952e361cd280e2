package observe

import (
	"context"
	"log/slog"
)

// Slog returns an Observer that logs each event to logger: lost leases
// and failed calls at Warn, the rest at Debug, with the package,
// operation, key, holder, units, units in use, and duration. A nil logger
// means slog.Default().
func Slog(logger *slog.Logger) Observer {
	if logger == nil {
		logger = slog.Default()
	}
	return slogObserver{logger}
}

type slogObserver struct{ logger *slog.Logger }

func (o slogObserver) Observe(ctx context.Context, e Event) {
	level := slog.LevelDebug
	if e.Kind == LeaseLost || e.Kind == Error {
		level = slog.LevelWarn
	}
	if !o.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("package", e.Package),
		slog.String("key", e.Key),
		slog.String("holder", e.Holder),
	}
	if e.Op != "" {
		attrs = append(attrs, slog.String("op", e.Op))
	}
	if e.Units > 0 {
		attrs = append(attrs, slog.Int64("units", e.Units))
	}
	if e.InUse >= 0 {
		attrs = append(attrs, slog.Int64("in_use", e.InUse), slog.Int64("limit", e.Limit))
	}
	if e.Kind == Released || e.Kind == Renewed {
		attrs = append(attrs, slog.Bool("held", e.Held))
	}
	if e.Kind != LeaseLost {
		attrs = append(attrs, slog.Duration("duration", e.Duration))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.Any("error", e.Err))
	}
	o.logger.LogAttrs(ctx, level, e.Package+": "+e.Kind.String(), attrs...)
}

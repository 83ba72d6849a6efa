package payments

import "log/slog"

// OrDiscard is a service's logger: log, or one that discards when log is nil (the configs'
// "default: discard").
func OrDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

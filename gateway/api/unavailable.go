package api

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable maps an error that means "a dependency is down or slow, try again" to its
// 503, wherever it is wrapped; it answers nil for any other error. It is the one place that
// knows these errors, so every handler (and Fail through From) answers them alike:
//
//   - PostgreSQL unreachable, refusing connections, shutting down, or cut off mid-query (a
//     connection error, a query or statement timeout, too many connections):
//     503 DATABASE_UNAVAILABLE;
//   - the request's deadline passed or its context was cancelled while waiting on anything
//     else (a pool acquire, a provider, the job queue), or a network connection broke:
//     503 SERVICE_UNAVAILABLE.
//
// Both answers carry Retry-After (see Fail).
func Unavailable(err error) *Error {
	if err == nil {
		return nil
	}
	if databaseDown(err) {
		return NewError(CodeDatabaseUnavailable, "the database is not answering; retry shortly")
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || networkDown(err) {
		return NewError(CodeServiceUnavailable, "the request did not finish within its deadline because a dependency is slow; retry shortly")
	}
	return nil
}

func databaseDown(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57014", // query_canceled (statement_timeout, cancel request)
			pgErr.Code == "57P01", // admin_shutdown
			pgErr.Code == "57P02", // crash_shutdown
			pgErr.Code == "57P03", // cannot_connect_now
			pgErr.Code == "53300", // too_many_connections
			pgErr.Code == "55P03": // lock_not_available (lock_timeout)
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	return pgconn.Timeout(err)
}

// networkDown is a connection that broke or could not be made (to any dependency).
func networkDown(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

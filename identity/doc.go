// Package identity owns merchants, their sessions and their API keys: registration, email
// verification and password reset by one-time code, passwords (argon2id, bounded), login,
// access tokens (HS256 JWTs) and rotating refresh tokens, API keys and their scopes, the
// merchant's profile, KYC and IP whitelist, demo and test seeding, the operator's view of
// merchants (svc merchant ...), and the in-memory key cache with its two owned goroutines
// (the LISTEN/NOTIFY listener and the last-used flusher).
//
// It knows no HTTP. gateway/auth parses requests, calls this package and answers; its
// middleware asks IdentifyKey / IdentifyToken who a credential stands for and Admit whether
// the merchant may be served from the client's address. Errors are *Error values whose
// APICode is the gateway's error code; every query is scoped by merchant (and environment
// where a row has one).
package identity

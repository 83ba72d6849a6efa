// Package postgres owns the PostgreSQL side of the service: the connection pool, the one
// transaction helper every write goes through, and the ordered, embedded schema migrations
// (ours through github.com/jackc/tern/v2, then the job queue's through rivermigrate).
//
// Domain packages keep their own SQL in a store beside their rules and reach the database
// only through the Querier and Tx types declared here, so a domain's queries can run inside
// a caller's transaction.
package postgres

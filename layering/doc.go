// Package layering holds no code. Its test reads the import graph with `go list` and fails
// when a dependency points the wrong way (docs/architecture.md draws the floors):
//
//	cmd, bench > gateway > payments, identity, cluster > persistence > engine
//
// and, inside the gateway, a resource package (trading, onramps, ...) never imports a
// sibling: what two of them share lives in gateway/api.
package layering

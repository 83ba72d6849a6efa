// Package routescopes holds only a test: it registers every route set the server serves
// and checks gateway/auth's scope table against them (every protected route has a scope,
// every other one is public). It lives apart from gateway/auth so that package's own tests
// do not depend on every resource package.
package routescopes

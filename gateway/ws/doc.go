// Package ws owns the WebSocket market-data stream (/v1/ws): the hub per environment that
// turns the engine's durable events into order-book, trade, ticker and kline messages (and
// private order, balance and fill messages per merchant, numbered per account and kept in a
// window for resumes: private.go), order entry on the stream (ops run as the REST requests
// they stand for, and cancel-on-disconnect: orders.go, session.go), the server that adopts upgraded sockets,
// reads them with one poller and writes them with a small writer pool, bounded per-connection
// queues with conflation for lagging readers, authentication on the upgrade or by an auth
// message (through an Authenticator, gateway/auth's Service), and the per-address limit of
// public streams and public REST market data (IPLimiter, over gateway/ratelimit). Client and
// Book are the test and load-generator side of the protocol.
package ws

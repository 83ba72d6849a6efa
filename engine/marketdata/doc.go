// Package marketdata keeps the public view of one symbol's market from the engine's
// events: a level book (price -> total quantity per side, with the per-level changes of
// each batch and the sequence they bring the book to), klines for twelve intervals and a
// rolling 24-hour ticker, all in the engine's fixed point.
//
// It is pure like the engine: no goroutines, no I/O, no clock. The caller feeds durable
// events in stream order (Market.Apply), passes the time in where a window needs it
// (Market.Ticker), and owns the locking. gateway/ws runs one Market per symbol on its
// hub goroutine and serves the REST market routes from the same replicas, so a REST
// order book carries the sequence of the WebSocket stream.
//
// # Levels from events
//
// EventAccepted of a limit order adds its quantity at its price; EventTrade takes the
// traded quantity off the maker's level (the trade price, the side opposite the taker)
// and, for a limit taker, off the taker's own level (its limit price, remembered from
// its EventAccepted, which always directly precedes its trades); EventCancelled of a
// limit order takes its remaining quantity off its level. Market orders never rest.
// Within a command the book may cross for a moment (a crossing limit order is added
// before its trades remove it); between commands it never does. A batch's per-level
// changes are the levels whose total differs from before the batch, so such a transient
// level never shows up in a diff.
//
// # Klines and ticker
//
// Candles are aligned to UTC: minutes and hours to the epoch, 1d to midnight, 1w to
// Monday 00:00. Times are the events' Time (unix nanoseconds of the command); a trade
// whose time is before the newest candle seen (commands may be stamped slightly out of
// ring order) counts in that candle. Only intervals with trades have candles. The ticker
// covers the 1440 one-minute candles up to the current minute (a rolling 24 hours at
// minute resolution).
package marketdata

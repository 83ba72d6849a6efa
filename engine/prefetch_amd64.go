package engine

// prefetch asks the CPU to bring the lines cache lines from addr on closer
// (PREFETCHT0). It is a hint: it never faults, whatever addr is, and unlike a load it
// does not hold up the locked instructions of the account mutexes that follow it, so a
// miss it starts overlaps with the work in between. The address is a uintptr so that
// the garbage collector never sees it (it may be stale: see market.prefetch).
//
//go:noescape
func prefetch(addr uintptr, lines int)

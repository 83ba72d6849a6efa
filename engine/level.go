package engine

// level is one price level: a FIFO of orders, oldest at head, with O(1) append and
// O(1) removal of any order (intrusive doubly linked list).
type level struct {
	price      Price
	key        int64 // the book's key of price (see book.key)
	total      Qty   // sum of the orders' remaining quantity
	count      int
	head, tail *order
}

func (l *level) push(o *order) {
	o.lvl = l
	o.prev = l.tail
	o.next = nil
	if l.tail != nil {
		l.tail.next = o
	} else {
		l.head = o
	}
	l.tail = o
	l.total += o.remaining
	l.count++
}

func (l *level) remove(o *order) {
	if o.prev != nil {
		o.prev.next = o.next
	} else {
		l.head = o.next
	}
	if o.next != nil {
		o.next.prev = o.prev
	} else {
		l.tail = o.prev
	}
	l.total -= o.remaining
	l.count--
	o.prev, o.next, o.lvl = nil, nil, nil
}

package auth

// FillHasher takes every hashing slot and every place in the waiting queue, as a flood of
// logins would; release gives them back.
func (s *Service) FillHasher() (release func()) {
	h := s.hasher
	for i := 0; i < cap(h.sem); i++ {
		h.sem <- struct{}{}
	}
	h.waiting.Add(h.queue)
	return func() {
		h.waiting.Add(-h.queue)
		for i := 0; i < cap(h.sem); i++ {
			<-h.sem
		}
	}
}

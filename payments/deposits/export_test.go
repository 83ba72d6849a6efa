package deposits

import (
	"context"

	"github.com/google/uuid"
)

// RunBatch runs the steps of ids (each from `from`) as one batch of the step batcher and
// answers each one's outcome, in ids' order: the batcher forms its batches by timing, and
// a test of what a batch does with one bad step needs the step in a batch for certain.
func (s *Service) RunBatch(ctx context.Context, from string, ids ...uuid.UUID) []error {
	batch := make([]*stepReq, len(ids))
	byID := map[uuid.UUID]*stepReq{}
	for i, id := range ids {
		batch[i] = &stepReq{id: id, from: from}
		byID[id] = batch[i]
	}
	s.runSteps(ctx, batch)
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = byID[id].err
	}
	return errs
}

package deposits

import (
	"context"

	"svc/payments/providers"
)

// conversionRefused asks the environment's FX provider, when it can refuse a conversion
// (providers.ConversionChecker: the sandbox refuses an NGN amount ending in .13), whether
// d's conversion may go ahead. A refusal ends the deposit FAILED with the NGN returned
// (issue 11); a Go error leaves the step to be retried.
func (s *Service) conversionRefused(ctx context.Context, d Deposit) (string, bool, error) {
	fx, ok := s.cfg.Providers.For(d.Tenant.Environment).FX.(providers.ConversionChecker)
	if !ok {
		return "", false, nil
	}
	dec, err := fx.CheckConversion(ctx, providers.ConversionRequest{
		Reference: "deposit:" + d.ID.String(), From: d.Amount, To: d.Settlement.Asset,
	})
	if err != nil || dec.Approved {
		return "", false, err
	}
	reason := dec.Reason
	if reason == "" {
		reason = "the conversion was refused"
	}
	return "FX_FAILED: " + reason + "; returned to the sender", true, nil
}

package partners

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"svc/payments"
	"svc/payments/providers"
)

// EVMCustody is the live EVM custodian's partner name (payments/providers/evm): its chain
// watchers post each confirmed deposit through Receive, as a notification in the sandbox
// custodian's format (deposit.confirmed), signed with a secret only svcd holds (derived from
// the custody keystore). It then takes the path every partner's money takes: stored, deduplicated
// by event id (evm:<chain>:<tx hash>:<ordinal>), processed by the partner_events job, which
// confirms with the custodian that the address is the reference's and credits the merchant,
// the customer or the offramp.
const EVMCustody = "evm-custody"

// CustodyPartner is a custodian whose notifications are in the sandbox custody format,
// signed with secret, for environment.
func CustodyPartner(name, environment, secret string) Partner {
	return Partner{Name: name, Environment: environment, Verifier: SandboxCustodyVerifier(secret), Headers: []string{SandboxSignatureHeader}}
}

// CustodyNotice is a confirmed deposit a custodian's watcher hands over.
type CustodyNotice struct {
	EventID     string
	Reference   string
	Chain       providers.Chain
	Address     string
	Asset       string
	Amount      int64 // minor units
	TxHash      string
	ConfirmedAt time.Time
}

// NotifyCustody signs n under secret and takes it in through Receive for partner (the same
// intake as the route's): the same EventID twice changes nothing. It answers the stored
// notification's id.
func (s *Service) NotifyCustody(ctx context.Context, partner, secret string, n CustodyNotice) (uuid.UUID, error) {
	if p, ok := s.partners[partner]; !ok || p.Environment != payments.Live && p.Environment != payments.Sandbox {
		return uuid.Nil, fmt.Errorf("partners: custodian %q is not configured", partner)
	}
	body, sig, err := SandboxNotification(secret, n.EventID, TypeDepositConfirmed, n.ConfirmedAt, SandboxCrypto{
		Reference: n.Reference, Chain: string(n.Chain), Asset: n.Asset, Address: n.Address, Amount: n.Amount, TxHash: n.TxHash,
		ConfirmedAt: stamp(n.ConfirmedAt)})
	if err != nil {
		return uuid.Nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(SandboxSignatureHeader, sig)
	h.Set("User-Agent", "svc-custody-watcher")
	r, err := s.Receive(ctx, partner, Incoming{Header: h, Body: body, RemoteAddr: "custody-watcher"})
	if err != nil {
		return uuid.Nil, err
	}
	return r.ID, nil
}

package webhooks

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"svc/payments/events"
)

// Endpoint is a merchant's registered receiver.
type Endpoint struct {
	ID             uuid.UUID
	URL            string
	Events         []string // empty: every event
	IsActive       bool
	DisabledReason string // why the service disabled it (e.g. 410 Gone); empty otherwise
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Created is an endpoint with its secret, returned only by Create and RotateSecret.
type Created struct {
	Endpoint
	Secret string
}

// Overlap bounds of a rotation: how long the replaced secret still signs deliveries.
const (
	DefaultRotationOverlap = 24 * time.Hour
	MaxRotationOverlap     = 7 * 24 * time.Hour
)

// RotateInput is POST /webhooks/endpoints/:id/rotate-secret.
type RotateInput struct {
	// ExpiresIn is how long the replaced secret stays valid; nil: DefaultRotationOverlap;
	// 0: not at all.
	ExpiresIn *time.Duration
}

// Rotated is the answer of RotateSecret: the new secret and until when the replaced one
// still signs deliveries (nil: it stopped at once).
type Rotated struct {
	Created
	PreviousExpiresAt *time.Time
}

// CreateInput is POST /webhooks/endpoints.
type CreateInput struct {
	URL    string
	Events []string
}

// UpdateInput is PATCH /webhooks/endpoints/:id; nil fields stay as they are.
type UpdateInput struct {
	URL      *string
	Events   *[]string
	IsActive *bool
}

// LogEntry is one delivery attempt or test send.
type LogEntry struct {
	ID          uuid.UUID
	EndpointID  uuid.UUID
	EndpointURL string
	EventID     *uuid.UUID // nil for test sends
	Event       string
	Payload     []byte // the exact JSON body sent
	StatusCode  *int   // nil when no HTTP response came back
	Success     bool
	Error       *string
	Duration    time.Duration
	Attempt     int
	Test        bool
	CreatedAt   time.Time
}

// LogFilter selects logs; zero fields do not filter.
type LogFilter struct {
	Event      string
	EndpointID *uuid.UUID
	Success    *bool
	Offset     int
	Limit      int
}

// TestResult is the outcome of a test send.
type TestResult struct {
	Success    bool
	StatusCode *int
	Error      *string
	Duration   time.Duration
	Event      string
	LogID      uuid.UUID
}

const maxURLLength = 2048

// validateURL checks an endpoint URL: absolute, https (http only when insecure is allowed),
// a host, no credentials, no fragment. Literal addresses and names the SSRF guard would
// refuse are rejected here already; every other name is checked again at connect time.
func validateURL(raw string, allowInsecure bool) error {
	if raw == "" {
		return invalid("url", "is required")
	}
	if len(raw) > maxURLLength {
		return invalid("url", fmt.Sprintf("must be at most %d characters", maxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return invalid("url", "must be an absolute https URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowInsecure:
	default:
		return invalid("url", "must use https")
	}
	if u.User != nil {
		return invalid("url", "must not carry credentials")
	}
	if u.Fragment != "" {
		return invalid("url", "must not have a fragment")
	}
	if allowInsecure {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return invalid("url", "must not point at this machine")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if reason := refusedAddr(a, false); reason != "" {
			return invalid("url", "must not point at a "+reason+" address")
		}
	}
	return nil
}

// normalizeEvents checks every name is in the catalogue and drops duplicates; an empty list
// subscribes to all.
func normalizeEvents(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for i, n := range names {
		if !events.Known(n) {
			return nil, invalid(fmt.Sprintf("events[%d]", i), fmt.Sprintf("unknown event name %q", n))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

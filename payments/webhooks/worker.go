package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"svc/payments"
	"svc/payments/events"
)

// Schedule is the wait before each retry with the default base of 5 s: ten retries over
// about three and a half days. Each wait gets ±10% jitter.
var Schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// DefaultRetryBase is the first entry of Schedule.
const DefaultRetryBase = 5 * time.Second

// RetryDelay is the wait after failed attempt number attempt (1-based), without jitter, for
// a schedule scaled so its first wait is base (tests use milliseconds).
func RetryDelay(base time.Duration, attempt int) time.Duration {
	i := min(max(attempt-1, 0), len(Schedule)-1)
	return time.Duration(float64(Schedule[i]) * float64(base) / float64(DefaultRetryBase))
}

// WorkerConfig tunes the delivery worker.
type WorkerConfig struct {
	RetryBase time.Duration // default DefaultRetryBase
	// JobTimeout bounds one attempt's job: the HTTP attempt and its log (default the
	// sender's timeout + 10s). A job running longer is presumed lost with its process and
	// is rescued once the client's RescueStuckJobsAfter has also passed.
	JobTimeout time.Duration
	Logger     *slog.Logger
	Now        func() time.Time
}

// Worker delivers one event to one endpoint per river job (events.DeliveryArgs). On every
// attempt it reads the endpoint afresh: a disabled or deleted endpoint ends the job, a new
// secret is used at once. Each attempt is logged; a 2xx completes the job, 410 Gone disables
// the endpoint and ends the job, anything else is retried on Schedule until MaxAttempts.
//
// Delivery is at least once: a crash between the receiver's answer and the job's
// completion sends the event again (same event id) when the job is rescued.
type Worker struct {
	river.WorkerDefaults[events.DeliveryArgs]
	pool   *pgxpool.Pool
	cipher *Cipher
	sender *Sender
	cfg    WorkerConfig
	stats  deliveryStats // stats.go
}

// NewWorker builds the delivery worker.
func NewWorker(pool *pgxpool.Pool, cipher *Cipher, sender *Sender, cfg WorkerConfig) *Worker {
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	cfg.Logger = payments.OrDiscard(cfg.Logger)
	cfg.Now = payments.OrNow(cfg.Now)
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = sender.cfg.Timeout + 10*time.Second
	}
	return &Worker{pool: pool, cipher: cipher, sender: sender, cfg: cfg}
}

// Register adds the worker to the process's river workers (see payments/jobs); its jobs run
// on the events.Queue queue, which the client must be configured with.
func Register(workers *river.Workers, w *Worker) error {
	return river.AddWorkerSafely(workers, w)
}

// Timeout bounds a job: the HTTP attempt plus time to log it.
func (w *Worker) Timeout(*river.Job[events.DeliveryArgs]) time.Duration {
	return w.cfg.JobTimeout
}

// NextRetry follows Schedule from the configured base, with ±10% jitter.
func (w *Worker) NextRetry(job *river.Job[events.DeliveryArgs]) time.Time {
	d := RetryDelay(w.cfg.RetryBase, job.Attempt)
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(d))
	return w.cfg.Now().Add(d + jitter)
}

// Work runs one attempt.
func (w *Worker) Work(ctx context.Context, job *river.Job[events.DeliveryArgs]) error {
	a := job.Args
	now := w.cfg.Now()
	t, err := loadTarget(ctx, w.pool, a.EndpointID, a.EventID, now)
	if errors.Is(err, errGone) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if t.deleted || !t.active {
		return river.JobCancel(errors.New("endpoint is disabled or deleted; delivery stopped"))
	}
	secret, old, err := w.cipher.openPair(t.secrets, a.EndpointID[:])
	if err != nil {
		return err
	}
	body, o := w.sender.send(ctx, t.url, delivery{
		eventID: a.EventID, event: t.event, data: t.data, createdAt: t.createdAt, secret: secret, oldSecret: old,
	}, now)

	// The attempt is logged even when the job's context was cancelled by a stop.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	eventID := a.EventID
	entry := LogEntry{
		ID: uuid.Must(uuid.NewV7()), EndpointID: a.EndpointID, EndpointURL: t.url, EventID: &eventID,
		Event: t.event, Payload: body, StatusCode: o.status, Success: o.success(), Error: o.err,
		Duration: o.duration, Attempt: job.Attempt, CreatedAt: now,
	}
	if err := insertLog(lctx, w.pool, t.tenant, entry); err != nil {
		w.cfg.Logger.Error("webhook log", "error", err, "event_id", a.EventID, "endpoint_id", a.EndpointID)
	}
	switch {
	case o.success():
		w.stats.observe(OutcomeSuccess, o.duration)
		return nil
	case o.status != nil && *o.status == http.StatusGone:
		w.stats.observe(OutcomeGone, o.duration)
		if err := disableEndpoint(lctx, w.pool, a.EndpointID, "receiver answered 410 Gone", w.cfg.Now()); err != nil {
			return err
		}
		w.cfg.Logger.Info("webhook endpoint disabled: 410 Gone", "endpoint_id", a.EndpointID)
		return river.JobCancel(errors.New("receiver answered 410 Gone; endpoint disabled"))
	}
	if job.MaxAttempts > 0 && job.Attempt >= job.MaxAttempts {
		w.stats.observe(OutcomeExhausted, o.duration)
	} else {
		w.stats.observe(OutcomeFailure, o.duration)
	}
	return fmt.Errorf("attempt %d: %s", job.Attempt, *o.err)
}

package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"svc/payments/jobs"
)

type stepArgs struct{ N int }

func (stepArgs) Kind() string { return "step_test" }

func TestStepWorker(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name   string
		wait   time.Duration
		err    error
		snooze time.Duration // 0: no snooze
		want   error
	}{
		{"done", 0, nil, 0, nil},
		{"a wait snoozes", 3 * time.Second, nil, 3 * time.Second, nil},
		{"an error is the job's error, whatever the wait", time.Second, boom, 0, boom},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got stepArgs
			w := &jobs.StepWorker[stepArgs]{Step: func(_ context.Context, a stepArgs) (time.Duration, error) {
				got = a
				return c.wait, c.err
			}}
			err := w.Work(context.Background(), &river.Job[stepArgs]{Args: stepArgs{N: 7}})
			if got.N != 7 {
				t.Fatalf("step got %+v", got)
			}
			var snooze *river.JobSnoozeError
			switch {
			case c.snooze > 0:
				if !errors.As(err, &snooze) || snooze.Duration != c.snooze {
					t.Fatalf("Work = %v, want a snooze of %s", err, c.snooze)
				}
			case err != c.want:
				t.Fatalf("Work = %v, want %v", err, c.want)
			}
		})
	}
	if o := jobs.Retried("q"); o.Queue != "q" || o.MaxAttempts != 25 {
		t.Fatalf("Retried = %+v", o)
	}
}

package journal

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kcatPath finds kcat through the project's script, which fetches Debian's package into
// .data/tools when it is missing.
func kcatPath(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs("../../.ci/kcat")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(script, "path").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	install := exec.Command(script)
	msg, _ := install.CombinedOutput()
	out, err := exec.Command(script, "path").Output()
	if err != nil {
		t.Skipf("kcat is not available and .ci/kcat could not fetch it, so the journal topic is not read with kcat here:\n%s", msg)
	}
	return strings.TrimSpace(string(out))
}

func TestKcatReadsTheJournalTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster and kcat")
	}
	kcat := kcatPath(t)
	c := newCluster(t)
	brokers := c.ListenAddrs()
	topic := newTopic()
	j := openKafkaEpoch(t, brokers, topic, 7)
	mustAppend(t, j, batchOf(1, 3))
	mustAppend(t, j, batchOf(4, 2))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// -C consume, -e exit at the end, one line per message: Kafka offset, key length,
	// headers, payload.
	cmd := exec.CommandContext(ctx, kcat, "-b", strings.Join(brokers, ","), "-t", topic, "-p", "0", "-C", "-e",
		"-o", "beginning", "-q", "-f", "%o|%K|%h|%s\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("kcat read %d messages, want the fence and 5 records:\n%s", len(lines), out)
	}
	for i, line := range lines {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 || f[0] != fmt.Sprint(i) || f[1] != "8" || !strings.HasPrefix(f[2], "epoch=") {
			t.Fatalf("message %d: %q", i, line)
		}
		want := "svc journal fence: epoch 7"
		if i > 0 {
			want = string(payloadFor(uint64(i)))
		}
		if f[3] != want {
			t.Fatalf("message %d payload %q, want %q", i, f[3], want)
		}
	}
	t.Logf("kcat (%s) read:\n%s", kcat, out)
}

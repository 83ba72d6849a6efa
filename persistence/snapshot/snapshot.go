// Package snapshot stores engine snapshots as files: each one written to a temporary file,
// fsynced, renamed into place and the folder fsynced, so a crash leaves either the old set
// or the new one. A file is named after the journal offset it covers and carries a CRC, so a
// damaged newest snapshot is skipped for the one before it.
package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	prefix = "snapshot-"
	suffix = ".bin"
	magic  = "SVCSNAP1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store is a folder of snapshots.
type Store struct {
	Dir  string
	Keep int // how many newest snapshots to keep; default 3
}

// Save writes data as the snapshot at offset and prunes old ones.
func (s *Store) Save(offset uint64, data []byte) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return "", fmt.Errorf("snapshot dir: %w", err)
	}
	name := filepath.Join(s.Dir, fmt.Sprintf("%s%020d%s", prefix, offset, suffix))
	tmp, err := os.CreateTemp(s.Dir, ".tmp-snapshot-*")
	if err != nil {
		return "", fmt.Errorf("snapshot temp file: %w", err)
	}
	defer os.Remove(tmp.Name())
	var hdr [8 + 8 + 8 + 4]byte
	copy(hdr[:8], magic)
	binary.LittleEndian.PutUint64(hdr[8:], offset)
	binary.LittleEndian.PutUint64(hdr[16:], uint64(len(data)))
	binary.LittleEndian.PutUint32(hdr[24:], crc32.Checksum(data, castagnoli))
	if _, err := tmp.Write(hdr[:]); err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return "", fmt.Errorf("install snapshot: %w", err)
	}
	if d, err := os.Open(s.Dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	s.prune()
	return name, nil
}

// Latest returns the newest intact snapshot and its offset; ok is false when there is none.
func (s *Store) Latest() (offset uint64, data []byte, ok bool, err error) {
	offsets, err := s.list()
	if err != nil {
		return 0, nil, false, err
	}
	for i := len(offsets) - 1; i >= 0; i-- {
		data, err := s.read(offsets[i])
		if err == nil {
			return offsets[i], data, true, nil
		}
	}
	return 0, nil, false, nil
}

// Offsets lists the offsets of the stored snapshots, oldest first (intact or not).
func (s *Store) Offsets() ([]uint64, error) { return s.list() }

func (s *Store) read(offset uint64) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, fmt.Sprintf("%s%020d%s", prefix, offset, suffix)))
	if err != nil {
		return nil, err
	}
	if len(b) < 28 || string(b[:8]) != magic || binary.LittleEndian.Uint64(b[8:]) != offset {
		return nil, errors.New("snapshot: bad header")
	}
	n := binary.LittleEndian.Uint64(b[16:])
	if uint64(len(b)-28) != n || crc32.Checksum(b[28:], castagnoli) != binary.LittleEndian.Uint32(b[24:]) {
		return nil, errors.New("snapshot: bad checksum")
	}
	return b[28:], nil
}

func (s *Store) list() ([]uint64, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix), 10, 64)
		if err == nil {
			out = append(out, off)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func (s *Store) prune() {
	keep := s.Keep
	if keep <= 0 {
		keep = 3
	}
	offsets, err := s.list()
	if err != nil || len(offsets) <= keep {
		return
	}
	for _, off := range offsets[:len(offsets)-keep] {
		_ = os.Remove(filepath.Join(s.Dir, fmt.Sprintf("%s%020d%s", prefix, off, suffix)))
	}
}

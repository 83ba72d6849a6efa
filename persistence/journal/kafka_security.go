package journal

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// KafkaSecurity is how a process reaches the brokers of a managed Kafka: TLS (the brokers'
// CA, optionally a client certificate) and SASL/SCRAM. svcd and the operator CLI (svc
// journal) fill it from the same flags (Flags) and turn it into KafkaOptions.TLS and
// KafkaOptions.SASL the same way (Apply).
type KafkaSecurity struct {
	TLS           bool
	TLSCAFile     string
	TLSCertFile   string
	TLSKeyFile    string
	SASLMechanism string // "", scram-sha-256, scram-sha-512
	SASLUsername  string // SVC_KAFKA_SASL_USERNAME only
	SASLPassword  string // SVC_KAFKA_SASL_PASSWORD only
}

// Flags registers -kafka-tls, -kafka-tls-ca-file, -kafka-tls-cert-file, -kafka-tls-key-file
// and -kafka-sasl-mechanism on fs, each defaulting to its SVC_ variable (SVC_KAFKA_TLS, ...),
// and takes the SASL user and password from SVC_KAFKA_SASL_USERNAME and
// SVC_KAFKA_SASL_PASSWORD only (a command line is visible to every user of the machine). It
// returns an error for an SVC_ value it cannot read; the flags are registered all the same.
func (s *KafkaSecurity) Flags(fs *flag.FlagSet, getenv func(string) string) error {
	var bad error
	str := func(name, def string) string {
		if v := getenv(envVar(name)); v != "" {
			return v
		}
		return def
	}
	tlsDefault := false
	if v := getenv(envVar("kafka-tls")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad = fmt.Errorf("%s=%q: want true or false", envVar("kafka-tls"), v)
		}
		tlsDefault = b
	}
	fs.BoolVar(&s.TLS, "kafka-tls", tlsDefault, "connect to the brokers over TLS (implied by --kafka-tls-ca-file or --kafka-tls-cert-file)")
	fs.StringVar(&s.TLSCAFile, "kafka-tls-ca-file", str("kafka-tls-ca-file", ""), "PEM file of the certificate authorities that sign the brokers' certificates (default: the system's)")
	fs.StringVar(&s.TLSCertFile, "kafka-tls-cert-file", str("kafka-tls-cert-file", ""), "PEM client certificate for brokers that require one (with --kafka-tls-key-file)")
	fs.StringVar(&s.TLSKeyFile, "kafka-tls-key-file", str("kafka-tls-key-file", ""), "PEM key of --kafka-tls-cert-file")
	fs.StringVar(&s.SASLMechanism, "kafka-sasl-mechanism", str("kafka-sasl-mechanism", ""), "SASL authentication: scram-sha-256 or scram-sha-512 (empty: none); the user and password come only from SVC_KAFKA_SASL_USERNAME and SVC_KAFKA_SASL_PASSWORD")
	s.SASLUsername = getenv("SVC_KAFKA_SASL_USERNAME")
	s.SASLPassword = getenv("SVC_KAFKA_SASL_PASSWORD")
	return bad
}

// envVar is the SVC_ variable that gives flag name its default.
func envVar(name string) string {
	return "SVC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Validate reports every setting that cannot work: a certificate without its key, an
// unknown SASL mechanism or one without credentials, an unreadable CA, certificate or key.
func (s KafkaSecurity) Validate() error {
	var errs []error
	if (s.TLSCertFile == "") != (s.TLSKeyFile == "") {
		errs = append(errs, errors.New("-kafka-tls-cert-file and -kafka-tls-key-file go together"))
	}
	switch s.SASLMechanism {
	case "":
	case "scram-sha-256", "scram-sha-512":
		if s.SASLUsername == "" || s.SASLPassword == "" {
			errs = append(errs, fmt.Errorf("-kafka-sasl-mechanism %s needs SVC_KAFKA_SASL_USERNAME and SVC_KAFKA_SASL_PASSWORD in the environment", s.SASLMechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("-kafka-sasl-mechanism %q: want scram-sha-256 or scram-sha-512", s.SASLMechanism))
	}
	if _, err := s.tlsConfig(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Apply sets o.TLS and o.SASL (nil without TLS or SASL), or returns Validate's error.
func (s KafkaSecurity) Apply(o *KafkaOptions) error {
	if err := s.Validate(); err != nil {
		return err
	}
	t, err := s.tlsConfig()
	if err != nil {
		return err
	}
	m, err := s.saslMechanism()
	if err != nil {
		return fmt.Errorf("-kafka-sasl-mechanism: %w", err)
	}
	o.TLS, o.SASL = t, m
	return nil
}

// tlsConfig is nil without TLS.
func (s KafkaSecurity) tlsConfig() (*tls.Config, error) {
	if !s.TLS && s.TLSCAFile == "" && s.TLSCertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLSCAFile != "" {
		pem, err := os.ReadFile(s.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("-kafka-tls-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-kafka-tls-ca-file %s: no PEM certificate in it", s.TLSCAFile)
		}
		cfg.RootCAs = pool
	}
	if s.TLSCertFile != "" && s.TLSKeyFile != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCertFile, s.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("-kafka-tls-cert-file/-kafka-tls-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// saslMechanism is nil without SASL.
func (s KafkaSecurity) saslMechanism() (sasl.Mechanism, error) {
	switch s.SASLMechanism {
	case "scram-sha-256":
		return scram.Mechanism(scram.SHA256, s.SASLUsername, s.SASLPassword)
	case "scram-sha-512":
		return scram.Mechanism(scram.SHA512, s.SASLUsername, s.SASLPassword)
	}
	return nil, nil
}

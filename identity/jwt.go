package identity

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// Access tokens: HS256 JWTs of 15 minutes, subject = merchant id.
const (
	AccessTTL   = 15 * time.Minute
	jwtIssuer   = "svc"
	jwtAudience = "svc-api"
	minSecret   = 32
)

// signer issues and checks access tokens.
type signer struct {
	secret []byte
	now    func() time.Time
}

func newSigner(secret []byte, now func() time.Time) (*signer, error) {
	if len(secret) < minSecret {
		return nil, fmt.Errorf("identity: JWT secret must be at least %d bytes", minSecret)
	}
	return &signer{secret: secret, now: now}, nil
}

type accessClaims struct {
	jwt.RegisteredClaims
}

func (s *signer) issue(merchantID uuid.UUID) (string, time.Time, error) {
	now := s.now().UTC()
	exp := now.Add(AccessTTL)
	c := accessClaims{jwt.RegisteredClaims{
		Issuer:    jwtIssuer,
		Subject:   merchantID.String(),
		Audience:  jwt.ClaimStrings{jwtAudience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
		ID:        uuid.Must(uuid.NewV7()).String(),
	}}
	t, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.secret)
	return t, exp, err
}

var errBadToken = errors.New("identity: invalid access token")

// parse accepts only HS256 tokens signed with our secret, from our issuer for our audience,
// with an expiry in the future. "none" and every other algorithm are refused before the
// signature is looked at.
func (s *signer) parse(token string) (uuid.UUID, error) {
	var c accessClaims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodHS256 || t.Header["alg"] != "HS256" {
			return nil, errBadToken
		}
		return s.secret, nil
	},
		jwt.WithValidMethods([]string{"HS256"}),
		jwt.WithIssuer(jwtIssuer),
		jwt.WithAudience(jwtAudience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return uuid.Nil, errBadToken
	}
	id, err := uuid.Parse(c.Subject)
	if err != nil {
		return uuid.Nil, errBadToken
	}
	return id, nil
}

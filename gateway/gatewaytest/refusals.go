package gatewaytest

import "testing"

// Validation is how every 400 VALIDATION_ERROR body starts; a Refusal's Want appends the
// field errors and `]}`.
const Validation = `{"success":false,"message":"VALIDATION_ERROR","detail":"request validation failed","errors":[`

// Refusal is a request a route refuses and its answer, word for word.
type Refusal struct {
	Name, Method, Path string
	Body               string // "": none; sent as is
	Status             int
	Want               string // the whole body
}

// Refused is a Refusal, for tables written as rows.
func Refused(name, method, path, body string, status int, want string) Refusal {
	return Refusal{Name: name, Method: method, Path: path, Body: body, Status: status, Want: want}
}

// Refusals sends each request with key and fails the subtest unless the answer is the
// refusal's status, its body byte for byte, and Content-Type application/json: the way a
// route set pins its refusals before its handlers change.
func (s *Server) Refusals(t *testing.T, key string, cases []Refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var body any
			if c.Body != "" {
				body = c.Body
			}
			r := s.Do(t, c.Method, c.Path, key, body)
			if r.Status != c.Status || string(r.Body) != c.Want || r.Header["Content-Type"] != "application/json" {
				t.Fatalf("answered %s (%s)\nwant %d %s", r, r.Header["Content-Type"], c.Status, c.Want)
			}
		})
	}
}

package payments

import "strings"

// Reporter collects field errors: *Problems is one, and so is the gateway's *api.Validator.
type Reporter interface {
	Add(field, message string)
}

// OneOf answers whether v is one of allowed; when not, it reports field to r as required
// (v empty) or as not one of allowed.
func OneOf(r Reporter, field, v string, allowed ...string) bool {
	if v == "" {
		r.Add(field, "is required")
		return false
	}
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	r.Add(field, "must be one of "+strings.Join(allowed, ", "))
	return false
}

package auth

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/identity"
)

func (s *Service) handleUpdateProfile(ctx *fasthttp.RequestCtx) {
	var in struct {
		BusinessName *string `json:"business_name"`
		FirstName    *string `json:"first_name"`
		LastName     *string `json:"last_name"`
		Phone        *string `json:"phone"`
		Website      *string `json:"website"`
		Country      *string `json:"country"`
		Address      *string `json:"address"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	trim := func(p *string) {
		if p != nil {
			*p = strings.TrimSpace(*p)
		}
	}
	for _, p := range []*string{in.BusinessName, in.FirstName, in.LastName, in.Phone, in.Website, in.Country, in.Address} {
		trim(p)
	}
	if in.BusinessName != nil {
		v.Length("business_name", *in.BusinessName, 1, 255)
	}
	if in.FirstName != nil {
		v.Length("first_name", *in.FirstName, 1, 100)
	}
	if in.LastName != nil {
		v.Length("last_name", *in.LastName, 1, 100)
	}
	if in.Phone != nil {
		v.Length("phone", *in.Phone, 0, 32)
	}
	if in.Website != nil {
		v.Length("website", *in.Website, 0, 255)
		v.Check(*in.Website == "" || strings.HasPrefix(*in.Website, "https://") || strings.HasPrefix(*in.Website, "http://"), "website", "must be an http(s) URL")
	}
	if in.Country != nil {
		*in.Country = strings.ToUpper(*in.Country)
		v.Check(*in.Country == "" || len(*in.Country) == 3 && strings.Trim(*in.Country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "", "country", "must be an ISO 3166-1 alpha-3 code")
	}
	if in.Address != nil {
		v.Length("address", *in.Address, 0, 500)
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	p, _ := api.PrincipalOf(ctx)
	prof, err := s.id.UpdateProfile(api.Ctx(ctx), p.MerchantID, identity.Environment(p.Environment), identity.ProfilePatch{
		BusinessName: in.BusinessName, FirstName: in.FirstName, LastName: in.LastName, Phone: in.Phone,
		Website: in.Website, Country: in.Country, Address: in.Address,
	})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, toProfileJSON(prof))
}

func (s *Service) handleKYC(ctx *fasthttp.RequestCtx) {
	var in struct {
		BusinessType       string          `json:"business_type"`
		RegistrationNumber string          `json:"registration_number"`
		Country            string          `json:"country"`
		Address            string          `json:"address"`
		Director           json.RawMessage `json:"director"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, err)
		return
	}
	in.Country = strings.ToUpper(strings.TrimSpace(in.Country))
	var v api.Validator
	v.OneOf("business_type", in.BusinessType, "sole_proprietorship", "partnership", "limited_company", "non_profit")
	v.Length("registration_number", strings.TrimSpace(in.RegistrationNumber), 1, 64)
	v.Check(len(in.Country) == 3 && strings.Trim(in.Country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "", "country", "must be an ISO 3166-1 alpha-3 code")
	v.Length("address", strings.TrimSpace(in.Address), 1, 500)
	var director struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	if len(in.Director) == 0 || json.Unmarshal(in.Director, &director) != nil {
		v.Add("director", "must be an object with first_name and last_name")
	} else {
		v.Length("director.first_name", strings.TrimSpace(director.FirstName), 1, 100)
		v.Length("director.last_name", strings.TrimSpace(director.LastName), 1, 100)
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	p, _ := api.PrincipalOf(ctx)
	k, err := s.id.SubmitKYC(api.Ctx(ctx), p.MerchantID, identity.Environment(p.Environment), map[string]any{
		"business_type": in.BusinessType, "registration_number": strings.TrimSpace(in.RegistrationNumber),
		"country": in.Country, "address": strings.TrimSpace(in.Address),
		"director": map[string]string{"first_name": director.FirstName, "last_name": director.LastName},
	})
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, map[string]any{"environment": p.Environment, "kyc_status": k.Status,
		"submitted_at": ptrTime(k.SubmittedAt), "reviewed_at": ptrTime(k.ReviewedAt)})
}

type whitelistJSON struct {
	Enabled  bool     `json:"enabled"`
	Required bool     `json:"required"`
	IPs      []string `json:"ips"`
}

func toWhitelistJSON(w identity.Whitelist) whitelistJSON {
	out := whitelistJSON{Enabled: w.Enabled, Required: w.Required, IPs: make([]string, len(w.IPs))}
	for i, p := range w.IPs {
		out.IPs[i] = p.String()
	}
	return out
}

func (s *Service) handleGetWhitelist(ctx *fasthttp.RequestCtx) {
	p, _ := api.PrincipalOf(ctx)
	w, err := s.id.Whitelist(api.Ctx(ctx), p.MerchantID)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, toWhitelistJSON(w))
}

func (s *Service) handlePutWhitelist(ctx *fasthttp.RequestCtx) {
	var in struct {
		Enabled  *bool    `json:"enabled"`
		Required *bool    `json:"required"`
		IPs      []string `json:"ips"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, err)
		return
	}
	var v api.Validator
	v.Check(in.Enabled != nil, "enabled", "is required")
	v.Check(len(in.IPs) <= 100, "ips", "must hold at most 100 entries")
	var w identity.Whitelist
	for i, raw := range in.IPs {
		p, err := identity.ParsePrefix(raw)
		if err != nil {
			v.Add("ips["+strconv.Itoa(i)+"]", "must be an IPv4 or IPv6 address or CIDR")
			continue
		}
		w.IPs = append(w.IPs, p)
	}
	if in.Enabled != nil {
		w.Enabled = *in.Enabled
		v.Check(!w.Enabled || len(in.IPs) > 0, "ips", "must not be empty when the whitelist is enabled")
	}
	if in.Required != nil {
		w.Required = *in.Required
	}
	if err := v.Err(); err != nil {
		api.Fail(ctx, err)
		return
	}
	p, _ := api.PrincipalOf(ctx)
	w, err := s.id.SetWhitelist(api.Ctx(ctx), p.MerchantID, w)
	if err != nil {
		api.Fail(ctx, err)
		return
	}
	api.OK(ctx, toWhitelistJSON(w))
}

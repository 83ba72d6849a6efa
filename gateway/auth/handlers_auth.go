package auth

import (
	"cmp"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/identity"
)

const maxPassword = 1024 // argon2 input is bounded so a huge body cannot cost more

// fail is api.Fail that adds Retry-After when the password hasher is full.
func fail(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, identity.ErrHashBusy) {
		ctx.Response.Header.Set("Retry-After", "1")
	}
	api.Fail(ctx, err)
}

func (s *Service) handleRegister(ctx *fasthttp.RequestCtx) {
	var in struct {
		Email        string `json:"email"`
		Password     string `json:"password"`
		BusinessName string `json:"business_name"`
		FirstName    string `json:"first_name"`
		LastName     string `json:"last_name"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	in.Email = strings.TrimSpace(in.Email)
	var v api.Validator
	if v.Required("email", in.Email) {
		v.Email("email", in.Email)
	}
	checkPassword(&v, "password", in.Password)
	v.Length("business_name", strings.TrimSpace(in.BusinessName), 1, 255)
	v.Length("first_name", strings.TrimSpace(in.FirstName), 1, 100)
	v.Length("last_name", strings.TrimSpace(in.LastName), 1, 100)
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	m, err := s.id.Register(api.Ctx(ctx), identity.RegisterInput{Email: in.Email, Password: in.Password, BusinessName: strings.TrimSpace(in.BusinessName),
		FirstName: strings.TrimSpace(in.FirstName), LastName: strings.TrimSpace(in.LastName)})
	if err != nil {
		fail(ctx, err)
		return
	}
	api.Created(ctx, map[string]any{
		"id": m.ID, "email": m.Email, "business_name": m.BusinessName, "first_name": m.FirstName,
		"last_name": m.LastName, "email_verified": false, "created_at": Time(m.CreatedAt),
		"next": "POST /v1/auth/verify-email with the code sent to the email",
	})
}

func checkPassword(v *api.Validator, field, pw string) {
	if v.Required(field, pw) {
		v.Length(field, pw, 8, maxPassword)
	}
}

type emailCode struct {
	Email string `json:"email"`
	OTP   string `json:"otp"`
}

func (in *emailCode) validate(v *api.Validator) {
	in.Email = strings.TrimSpace(in.Email)
	v.Required("email", in.Email)
	if v.Required("otp", in.OTP) {
		v.Check(len(in.OTP) == 6 && strings.Trim(in.OTP, "0123456789") == "", "otp", "must be 6 digits")
	}
}

func (s *Service) handleVerifyEmail(ctx *fasthttp.RequestCtx) {
	var in emailCode
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	var v api.Validator
	in.validate(&v)
	if err := v.Err(); err != nil {
		// An email already verified is 422 ALREADY_VERIFIED (spec) whatever the code says.
		if in.Email != "" {
			if done, verr := s.id.EmailVerified(api.Ctx(ctx), in.Email); verr != nil || done {
				err = cmp.Or(verr, error(identity.ErrAlreadyVerified))
			}
		}
		fail(ctx, err)
		return
	}
	m, err := s.id.VerifyEmail(api.Ctx(ctx), in.Email, in.OTP)
	if err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, map[string]any{"id": m.ID, "email": m.Email, "email_verified": true}, "email verified; you can log in")
}

func (s *Service) handleResendOTP(ctx *fasthttp.RequestCtx) {
	var in struct {
		Email   string `json:"email"`
		Purpose string `json:"purpose"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	in.Email = strings.TrimSpace(in.Email)
	if in.Purpose == "" {
		in.Purpose = identity.PurposeVerifyEmail
	}
	var v api.Validator
	v.Required("email", in.Email)
	v.OneOf("purpose", in.Purpose, identity.PurposeVerifyEmail, identity.PurposeResetPassword)
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	if err := s.id.ResendOTP(api.Ctx(ctx), in.Email, in.Purpose); err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, nil, "if the account exists and needs a code, a new one was sent (at most one a minute)")
}

func (s *Service) handleLogin(ctx *fasthttp.RequestCtx) {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	in.Email = strings.TrimSpace(in.Email)
	var v api.Validator
	v.Required("email", in.Email)
	if v.Required("password", in.Password) {
		v.Length("password", in.Password, 1, maxPassword)
	}
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	t, m, err := s.id.Login(api.Ctx(ctx), in.Email, in.Password)
	if err != nil {
		fail(ctx, err)
		return
	}
	api.OK(ctx, loginAnswer{tokensJSON: toTokensJSON(t), Merchant: map[string]any{"id": m.ID, "email": m.Email, "business_name": m.BusinessName}})
}

type loginAnswer struct {
	tokensJSON
	Merchant map[string]any `json:"merchant"`
}

type refreshBody struct {
	RefreshToken string `json:"refresh_token"`
}

func (s *Service) handleRefresh(ctx *fasthttp.RequestCtx) {
	var in refreshBody
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, identity.ErrInvalidRefreshToken)
		return
	}
	t, err := s.id.Refresh(api.Ctx(ctx), in.RefreshToken)
	if err != nil {
		fail(ctx, err)
		return
	}
	api.OK(ctx, toTokensJSON(t))
}

func (s *Service) handleLogout(ctx *fasthttp.RequestCtx) {
	var in refreshBody
	if err := api.Decode(ctx, &in); err != nil {
		api.Fail(ctx, identity.ErrInvalidRefreshToken)
		return
	}
	if err := s.id.Logout(api.Ctx(ctx), in.RefreshToken); err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, nil, "logged out; the session's refresh tokens are revoked")
}

func (s *Service) handleForgotPassword(ctx *fasthttp.RequestCtx) {
	var in struct {
		Email string `json:"email"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	in.Email = strings.TrimSpace(in.Email)
	var v api.Validator
	v.Required("email", in.Email)
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	if err := s.id.ForgotPassword(api.Ctx(ctx), in.Email); err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, nil, "if the account exists, a reset code was sent")
}

func (s *Service) handleResetPassword(ctx *fasthttp.RequestCtx) {
	var body struct {
		Email       string `json:"email"`
		OTP         string `json:"otp"`
		NewPassword string `json:"new_password"`
	}
	if err := api.Decode(ctx, &body); err != nil {
		fail(ctx, err)
		return
	}
	in := emailCode{Email: body.Email, OTP: body.OTP}
	var v api.Validator
	in.validate(&v)
	checkPassword(&v, "new_password", body.NewPassword)
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	if err := s.id.ResetPassword(api.Ctx(ctx), in.Email, in.OTP, body.NewPassword); err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, nil, "password reset; every session was logged out")
}

func (s *Service) handleMe(ctx *fasthttp.RequestCtx) {
	p, _ := api.PrincipalOf(ctx)
	prof, err := s.id.Profile(api.Ctx(ctx), p.MerchantID, identity.Environment(p.Environment))
	if err != nil {
		fail(ctx, err)
		return
	}
	api.OK(ctx, toProfileJSON(prof))
}

func (s *Service) handleChangePassword(ctx *fasthttp.RequestCtx) {
	var in struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
	}
	if err := api.Decode(ctx, &in); err != nil {
		fail(ctx, err)
		return
	}
	var v api.Validator
	if v.Required("current_password", in.CurrentPassword) {
		v.Length("current_password", in.CurrentPassword, 1, maxPassword)
	}
	checkPassword(&v, "new_password", in.NewPassword)
	if err := v.Err(); err != nil {
		fail(ctx, err)
		return
	}
	p, _ := api.PrincipalOf(ctx)
	if err := s.id.ChangePassword(api.Ctx(ctx), p.MerchantID, in.CurrentPassword, in.NewPassword); err != nil {
		fail(ctx, err)
		return
	}
	api.Message(ctx, nil, "password changed; every session was logged out")
}

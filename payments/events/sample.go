package events

// Sample returns example data of the shape typ carries, with placeholder values, for test
// sends (POST /webhooks/endpoints/:id/test) and documentation.
func Sample(typ Type) any {
	s := func(v string) *string { return &v }
	md := map[string]string{"order_id": "test_order"}
	switch typ {
	case DepositReceived, DepositPendingWithdrawal, DepositSettled, DepositFailed, DepositFlagged:
		return Deposit{ID: "test_deposit", OnrampID: "test_onramp", Amount: "150000.00", Currency: "NGN",
			Status: "SETTLED", SettledAmount: s("100.000000"), Asset: "USDT", Chain: s("TRON"),
			TxHash: s("test_tx_hash"), PaymentReference: "test_reference"}
	case WithdrawalFailed:
		return Withdrawal{ID: "test_withdrawal", AmountUSD: "100.00", Token: "USDT", Chain: "TRON",
			DestinationAddress: "test_address", Status: "FAILED", Metadata: md}
	case TransferFailed:
		return Transfer{ID: "test_transfer", Type: "NGN", Amount: "150000.00", Currency: "NGN", Status: "FAILED",
			RecipientID: "test_recipient", Reference: "test_reference", Metadata: md}
	case WithdrawalCompleted:
		return Withdrawal{ID: "test_withdrawal", AmountUSD: "100.00", Token: "USDT", Chain: "TRON",
			DestinationAddress: "test_address", Status: "SETTLED", TxHash: "test_tx_hash", SettledAt: "2025-01-01T00:00:00.000Z", Metadata: md}
	case OnrampCompleted:
		return Onramp{ID: "test_onramp", Type: "TEMPORARY", Status: "ACTIVE", AccountNumber: "0000000000",
			BankName: "Test Bank", Amount: s("150000.00"), Currency: "NGN", Metadata: md}
	case OfframpCompleted:
		return Offramp{ID: "test_offramp", Status: "COMPLETED", Asset: "USDT", Chain: "TRON", AmountCrypto: "100.000000",
			AmountNGN: "150000.00", SettlementMode: "NGN_PAYOUT", TxHash: "test_tx_hash", Metadata: md}
	case TransferCompleted:
		return Transfer{ID: "test_transfer", Type: "NGN", Amount: "150000.00", Currency: "NGN", Status: "COMPLETED",
			RecipientID: "test_recipient", Reference: "test_reference", Metadata: md}
	case PayoutCompleted:
		return Payout{ID: "test_payout", SourceType: "offramp", SourceID: "test_offramp", Amount: "150000.00",
			Currency: "NGN", Status: "COMPLETED", BankCode: "000", AccountNumber: "0000000000", Reference: "test_reference"}
	case CustomerCreated, CustomerTier1Verified, CustomerTier2Verified:
		return Customer{ID: "test_customer", Email: "customer@example.com", FirstName: "Test", LastName: "Customer", KYCTier: "TIER_1", Metadata: md}
	case CustomerTier2Rejected:
		return Customer{ID: "test_customer", Email: "customer@example.com", FirstName: "Test", LastName: "Customer",
			KYCTier: "TIER_1", Reason: s("test rejection"), Metadata: md}
	case CustomerBalanceCredited, CustomerBalanceRefunded:
		return CustomerBalance{CustomerID: "test_customer", Asset: "USDT", Amount: "100.000000", Balance: "100.000000",
			DepositID: s("test_deposit")}
	case MerchantBalanceCredited:
		return MerchantBalance{Asset: "USDT", Amount: "100.000000", Balance: "100.000000", Chain: "TRON",
			Address: "test_address", TxHash: "test_tx_hash"}
	case CheckoutPaymentCompleted:
		return CheckoutPayment{ID: "test_deposit", CheckoutLinkID: "test_checkout", InvoiceID: s("test_invoice"),
			Amount: "150000.00", Currency: "NGN", CustomerEmail: s("customer@example.com"), Metadata: md}
	case CheckoutPaymentFailed:
		return CheckoutPayment{ID: "test_deposit", CheckoutLinkID: "test_checkout", InvoiceID: s("test_invoice"),
			Amount: "150000.00", Currency: "NGN", CustomerEmail: s("customer@example.com"),
			FailureReason: s("INVALID_STATE: this one-time link was already paid")}
	case VirtualAccountCreated:
		return VirtualAccount{ID: "test_virtual_account", Type: "PERMANENT", CustomerID: s("test_customer"),
			AccountNumber: "0000000000", AccountName: "Test Customer", BankName: "Test Bank"}
	}
	return Test{Message: "This is a test webhook from svc."}
}

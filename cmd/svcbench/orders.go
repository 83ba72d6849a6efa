package main

import (
	"errors"
	"io"
)

func init() {
	commands["orders"] = command{summary: "HTTP order placement load against svcd (and a bare fasthttp server in the same run)", run: runOrders}
	commands["bare"] = command{summary: "the same load against only an in-process bare fasthttp server (the ceiling)", run: runBare}
}

func runOrders(args []string, stdout, stderr io.Writer) error { return errors.New("not implemented yet") }
func runBare(args []string, stdout, stderr io.Writer) error  { return errors.New("not implemented yet") }

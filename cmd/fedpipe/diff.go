package main

import "io"

func diffCmd(args []string, stdout, stderr io.Writer) int { return exitInvalid }

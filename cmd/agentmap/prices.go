package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/config"
)

// cmdPrices prints the price table in effect: the config's [prices]
// overrides first, then the embedded list prices with their sources.
func cmdPrices(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("prices", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfg := fl.String("config", "", "the config file whose [prices] overrides apply")
	asJSON := fl.Bool("json", false, "print the table as JSON")
	model := fl.String("model", "", "show only the row that prices this model")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap prices [--config FILE] [--json] [--model NAME]")
		fmt.Fprintln(stderr, "Prints the list prices in effect (USD per million tokens) and where each row comes from.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	c, code := loadConfig(*cfg, "prices", stderr)
	if c == nil {
		return code
	}
	table := prices.Default().With(priceOverrides(c))
	rows := table.Rows()
	if *model != "" {
		p, ok := table.Lookup(*model)
		if !ok {
			if n := prices.Normalise(*model); n == "" || n == prices.Unknown {
				fmt.Fprintf(stdout, "%s: unpriced (the log named no model; [prices.\"unknown\"] in the config prices such requests)\n", *model)
			} else {
				fmt.Fprintf(stdout, "%s: unpriced (no row prices it; add one under [prices] in the config)\n", *model)
			}
			return exitOK
		}
		rows = []prices.Price{p}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintf(stderr, "agentmap prices: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tINPUT\tCACHE W 5M\tCACHE W 1H\tCACHE READ\tOUTPUT\tLONG CONTEXT\tFAST\tCHECKED\tSOURCE")
	for _, p := range rows {
		cw1h := p.CacheWrite1h
		if cw1h == 0 {
			cw1h = p.CacheWrite
		}
		long, fast := "-", "-"
		if p.LongAbove > 0 {
			long = fmt.Sprintf(">%dk: x%s in, x%s out", p.LongAbove/1000, num(p.LongInput), num(p.LongOutput))
		}
		if p.Fast > 1 {
			fast = "x" + num(p.Fast)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Pattern, num(p.Input), num(p.CacheWrite), num(cw1h),
			num(p.CacheRead), num(p.Output), long, fast, dash(p.Checked), p.Source)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nUSD per million tokens. A model no row matches is unpriced: its tokens count, its cost shows as unpriced.")
	return exitOK
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// priceOverrides turns the config's [prices] into the builder's overrides.
func priceOverrides(c *config.Config) map[string]builder.Price {
	if len(c.Prices) == 0 {
		return nil
	}
	out := make(map[string]builder.Price, len(c.Prices))
	for prefix, p := range c.Prices {
		out[prefix] = priceOverride(p)
	}
	return out
}

func priceOverride(p config.Price) builder.Price {
	return builder.Price{Input: p.Input, CacheWrite: p.CacheWrite, CacheWrite1h: p.CacheWrite1h, CacheRead: p.CacheRead,
		Output: p.Output, Fast: p.Fast, LongAbove: p.LongAbove, LongInput: p.LongInput, LongOutput: p.LongOutput}
}

package validate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// subcommands is how many words after the program a verb may keep. The
// format page keeps "program plus subcommand" for multi-verb tools; gh and
// glab name a noun and a verb (gh pr view). A program not listed here may
// keep one subcommand word, as long as it has the shape of one.
var subcommands = map[string]int{
	"gh": 2, "glab": 2,
	"git": 1, "npm": 1, "pnpm": 1, "yarn": 1, "bun": 1, "cargo": 1, "go": 1,
	"uv": 1, "poetry": 1, "pip": 1, "pip3": 1, "docker": 1, "kubectl": 1,
	// Make targets and script arguments are arguments, never kept.
	"make": 0, "python": 0, "python3": 0, "node": 0, "bash": 0, "sh": 0, "zsh": 0,
	"cat": 0, "ls": 0, "cd": 0, "rm": 0, "cp": 0, "mv": 0, "mkdir": 0, "echo": 0,
	"grep": 0, "rg": 0, "find": 0, "sed": 0, "awk": 0, "head": 0, "tail": 0,
	"curl": 0, "wget": 0, "chmod": 0, "touch": 0, "pytest": 0, "tsc": 0,
}

// maxVerbWords is the format page's bound: program, noun and verb.
const maxVerbWords = 3

// word is what a program or subcommand name looks like.
var word = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+@:-]*$`)

// verbProblem says why a verb is not a program plus subcommand, or "".
func verbProblem(verb string) string {
	words := strings.Split(verb, " ")
	for _, w := range words {
		switch {
		case w == "":
			return "has empty words (extra spaces)"
		case strings.HasPrefix(w, "-"):
			return "has a flag"
		case strings.ContainsAny(w, `/\`):
			return "has a path"
		case strings.Contains(w, "="):
			return "has an assignment"
		case strings.ContainsAny(w, "\"'`"):
			return "has a quote"
		case strings.Contains(w, "$"):
			return "has a variable"
		case strings.ContainsAny(w, "|&;<>(){}[]*?~!#%^,"):
			return "has shell syntax"
		}
		if digits.MatchString(w) {
			return "has a number argument"
		}
		if !word.MatchString(w) {
			return "has a word that is not a name"
		}
	}
	if len(words) > maxVerbWords {
		return fmt.Sprintf("has %d words, more than %d", len(words), maxVerbWords)
	}
	extra, ok := subcommands[words[0]]
	if !ok {
		extra = 1
	}
	if len(words)-1 > extra {
		return "has an argument"
	}
	return ""
}

// verbs checks the verb of every shell event.
func (c *checker) verbs() {
	for i, v := range c.events {
		raw, present := object(v)["verb"]
		if !present {
			continue
		}
		verb, ok := str(raw)
		if !ok {
			continue // the schema reports the type
		}
		why := verbProblem(verb)
		if verb == "" {
			why = "is empty"
		}
		if why == "" {
			continue
		}
		c.add(ptr("events", i, "verb"), RuleVerb, "%s %s", showVerb(verb), why)
	}
}

// showVerb prints a verb only when every word is a plain name, so that an
// argument that is a secret is described, not repeated.
func showVerb(verb string) string {
	words := strings.Fields(verb)
	if len(words) == 0 || len(words) > maxVerbWords+1 || len(verb) > 60 {
		return describe(verb)
	}
	for _, w := range words {
		if !plainWord.MatchString(w) {
			return describe(verb)
		}
	}
	return strconv.Quote(verb)
}

var digits = regexp.MustCompile(`^[0-9][0-9.]*$`)

var plainWord = regexp.MustCompile(`^[a-z][a-z0-9._+-]{0,23}$`)

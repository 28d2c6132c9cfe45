//! What runs cost in money, from prices the operator keeps in a file
//! (`stats --prices FILE`): per model, a price per million tokens for
//! input, output, cache reads and cache writes. A figure is whole or it
//! is not a figure: a run whose model has no price (or whose cache tokens
//! have no price for their tier) makes every sum it is in incomplete, and
//! an incomplete sum is never printed as a total: it names the models
//! that lack a price, and `stats` exits 1 (agentsview's rule).
//!
//! The file, YAML (or JSON):
//!
//! ```yaml
//! currency: USD          # optional: a label printed with the figures
//! models:
//!   claude-sonnet-4-5: {input: 3.00, output: 15.00, cache_read: 0.30, cache_create: 3.75}
//!   claude-opus-4-1:   {input: 15,   output: 75}   # no cache tiers: a run with cache tokens is unpriced
//! ```

use crate::error::Failure;
use journal::stats::Tokens;
use std::collections::{BTreeMap, BTreeSet};

/// One model's prices, per million tokens.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_create: Option<f64>,
}

/// The price file.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    #[serde(default)]
    pub currency: Option<String>,
    pub models: BTreeMap<String, Price>,
}

impl Prices {
    /// Read the price file at `path`; a price that is not a finite number
    /// of at least 0 is refused, naming it.
    pub fn load(path: &std::path::Path) -> Result<Prices, Failure> {
        let shown = journal::shell::shown(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::new(format!("--prices {shown}: {e}")))?;
        let prices: Prices = serde_norway::from_str(&text).map_err(|e| {
            Failure::new(format!("--prices {shown}: {e}")).help(
                "give `models:` with, for each model, `input` and `output` (and `cache_read`, `cache_create`) in money per million tokens; `currency:` optional",
            )
        })?;
        for (model, p) in &prices.models {
            let all = [Some(p.input), Some(p.output), p.cache_read, p.cache_create];
            if all.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(Failure::new(format!(
                    "--prices {shown}: model {}: a price is a number of at least 0 (per million tokens)",
                    crate::output::sanitize(model, false)
                )));
            }
        }
        Ok(prices)
    }

    /// What `tokens` of `model` cost, or why it is unknown.
    pub fn of<N: journal::stats::Count + Into<i128>>(
        &self,
        model: &str,
        tokens: &Tokens<N>,
    ) -> Result<f64, String> {
        let Some(p) = self.models.get(model) else {
            return Err(format!("no price for model {model:?}"));
        };
        let n = |v: N| v.into() as f64;
        let tier = |count: N, price: Option<f64>, name: &str| {
            let c: i128 = count.into();
            match (c, price) {
                (0, _) => Ok(0.0),
                (c, Some(p)) => Ok(c as f64 * p),
                (_, None) => Err(format!("no {name} price for model {model:?}")),
            }
        };
        let sum = n(tokens.in_tokens) * p.input
            + n(tokens.out_tokens) * p.output
            + tier(tokens.cache_read_tokens, p.cache_read, "cache_read")?
            + tier(tokens.cache_create_tokens, p.cache_create, "cache_create")?;
        Ok(sum / 1_000_000.0)
    }
}

/// Money over some runs: whole only when every run was priced.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Cost {
    /// What the priced runs cost.
    pub amount: f64,
    /// Every run was priced: `amount` is the whole cost.
    pub complete: bool,
    /// Runs that could not be priced.
    pub unpriced_runs: u64,
    /// The models (and tiers) that lack a price, sorted.
    pub unpriced: BTreeSet<String>,
    #[serde(skip)]
    runs: u64,
}

impl Cost {
    /// Add one run's cost (or why it has none).
    pub fn add(&mut self, c: Result<f64, String>) {
        self.runs += 1;
        match c {
            Ok(a) => self.amount += a,
            Err(why) => {
                self.unpriced_runs += 1;
                self.unpriced.insert(why);
            }
        }
        self.complete = self.unpriced_runs == 0;
    }

    /// Add another sum.
    pub fn merge(&mut self, o: &Cost) {
        self.runs += o.runs;
        self.amount += o.amount;
        self.unpriced_runs += o.unpriced_runs;
        self.unpriced.extend(o.unpriced.iter().cloned());
        self.complete = self.unpriced_runs == 0;
    }

    /// As a table cell: the amount when whole, `-` when not.
    pub fn cell(&self, prices: &Prices) -> String {
        match self.complete {
            true => money(self.amount, prices),
            false => "-".to_owned(),
        }
    }

    /// The line that says a sum is not whole, naming why; `None` when it
    /// is whole.
    pub fn incomplete(&self, prices: &Prices) -> Option<String> {
        (!self.complete).then(|| {
            format!(
                "the cost is not whole: {} of {} run(s) unpriced ({}); the runs priced cost {}, which is not the total",
                self.unpriced_runs,
                self.runs,
                self.unpriced
                    .iter()
                    .map(|w| crate::output::sanitize(w, false).into_owned())
                    .collect::<Vec<_>>()
                    .join("; "),
                money(self.amount, prices)
            )
        })
    }
}

/// An amount to the cent (a tenth of a cent below one), with the file's
/// currency when it names one.
pub fn money(amount: f64, prices: &Prices) -> String {
    let n = if amount != 0.0 && amount.abs() < 1.0 {
        format!("{amount:.4}")
    } else {
        format!("{amount:.2}")
    };
    match &prices.currency {
        Some(c) => format!("{n} {}", crate::output::sanitize(c, false)),
        None => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> Prices {
        serde_norway::from_str(
            "currency: USD\nmodels:\n  a: {input: 3, output: 15, cache_read: 0.3, cache_create: 3.75}\n  b: {input: 1, output: 2}\n",
        )
        .unwrap()
    }

    fn tokens(i: i64, o: i64, r: i64, c: i64) -> Tokens {
        Tokens {
            in_tokens: i,
            out_tokens: o,
            cache_read_tokens: r,
            cache_create_tokens: c,
            thinking_tokens: 0,
        }
    }

    #[test]
    fn a_run_costs_its_tokens_at_its_models_prices() {
        let p = prices();
        let c = p
            .of("a", &tokens(1_000_000, 100_000, 2_000_000, 0))
            .unwrap();
        assert!((c - (3.0 + 1.5 + 0.6)).abs() < 1e-9, "{c}");
        assert!(p.of("b", &tokens(10, 10, 0, 0)).is_ok());
        assert!(p
            .of("b", &tokens(10, 10, 5, 0))
            .unwrap_err()
            .contains("cache_read"));
        assert!(p
            .of("z", &tokens(1, 1, 0, 0))
            .unwrap_err()
            .contains("\"z\""));
    }

    #[test]
    fn a_sum_with_an_unpriced_run_is_never_whole() {
        let p = prices();
        let mut s = Cost::default();
        s.add(p.of("a", &tokens(1_000_000, 0, 0, 0)));
        assert!(s.complete);
        assert_eq!(s.cell(&p), "3.00 USD");
        s.add(p.of("z", &tokens(1, 0, 0, 0)));
        assert!(!s.complete);
        assert_eq!(s.cell(&p), "-");
        let why = s.incomplete(&p).unwrap();
        assert!(
            why.contains("1 of 2 run(s) unpriced") && why.contains("\"z\""),
            "{why}"
        );
    }
}

"""One line item of a fiscal year's statements ("What is the year end FY2018 net PPNE for
3M?"), or its change from one fiscal year to another ("year-over-year change in revenue
from FY2016 to FY2017, in percent"), read from the statement itself, which retrieval may
not have ranked in the top 5.

>>> amount_ask("What is the FY2018 capital expenditure amount (in USD millions) for 3M?").name
'capital expenditure'
>>> a = change_ask("What is the year-over-year change in revenue from FY2016 to FY2017 "
...                "(in units of percents)?")
>>> a.name, a.change, a.years
('revenue', 'percent', ['2016', '2017'])
"""
from __future__ import annotations

import re

from docray.engine.synthesize.cells import _YEAR_IN
from docray.engine.synthesize.ratios import _A_TO_B, Formula, RatioAsk, asked_decimals
from docray.engine.synthesize.statements import norm_label

# One line item of a fiscal year's statements ("What is the year end FY2018 net PPNE for
# 3M?"): read from the statement itself, which retrieval may not have ranked in the top 5.
AMOUNTS: list[tuple[str, str, Formula]] = [
    ("total current assets", r"total current assets", lambda v: v.end("current_assets")),
    ("total current liabilities", r"total current liabilities",
     lambda v: v.end("current_liabilities")),
    ("total liabilities", r"total liabilit(?:y|ies)", lambda v: v.total_liabilities()),
    ("total assets", r"total assets", lambda v: v.end("total_assets")),
    ("net PP&E", r"(?:net )?(?:pp&e|ppne|ppe|property,? plant,? and equipment|property and "
                 r"equipment)(?:,? net)?", lambda v: v.end("ppe")),
    ("inventories", r"(?:merchandise )?inventor(?:y|ies)", lambda v: v.end("inventory")),
    ("accounts receivable", r"accounts receivable", lambda v: v.end("receivables")),
    ("accounts payable", r"accounts payable", lambda v: v.end("payables")),
    ("cash and cash equivalents", r"cash and (?:cash )?equivalents",
     lambda v: v.end("cash")),
    ("shareholders' equity", r"(?:total )?(?:stockholders|shareholders)'? equity",
     lambda v: v.end("equity")),
    ("long-term debt", r"long[- ]term debt", lambda v: v.end("long_term_debt")),
    ("goodwill", r"\bgoodwill\b", lambda v: v.end("goodwill")),
    ("capital expenditure", r"capital expenditures?|\bcapex\b|purchases? of property,? "
     r"(?:plant,? )?and equipment", lambda v: abs(v.end("capex"))),
    ("operating cash flow", r"cash flows? from operations|operating cash flows?|cash from "
     r"operations|net cash (?:provided by|from) operating activities",
     lambda v: v.end("operating_cash_flow")),
    ("depreciation and amortization", r"depreciation and amortization|\bd&a\b",
     lambda v: v.end("depreciation")),
    ("cost of sales", r"cost of (?:goods sold|sales|revenues?)|\bcogs\b",
     lambda v: v.end("cogs")),
    ("gross profit", r"gross profit", lambda v: v.gross_profit()),
    ("operating income", r"operating income", lambda v: v.end("operating_income")),
    ("net income", r"net income", lambda v: v.end("net_income")),
    ("EBITDA", r"(?<!adjusted )(?<!adj\. )\bebitda\b", lambda v: v.ebitda()),
    ("revenue", r"total revenues?|net sales|\brevenues?\b", lambda v: v.end("revenue")),
]
_AMOUNT_Q = re.compile(r"\b(?:what (?:is|was|were|are)|how much (?:[\w&'-]+ ){0,4}?"
                       r"(?:is|was|were|are|did|does|do)|what (?:[\w&'-]+ ){1,4}(?:does|did|do) "
                       r"(?:[\w&'.-]+ ){1,4}have)\b", re.I)
_FISCAL = re.compile(r"\bfy\s?'?\d{2,4}\b|\bfiscal (?:year )?\d{4}|fiscal year end|year[- ]end"
                     r"|\bfor (?:the )?(?:full )?year\b", re.I)
_NOT_AMOUNT = re.compile(r"ratio|percent|%|margin|per share|change|grow|increase|decrease|"
                         r"average|quarter|\bq[1-4]\b|three months|segment|adjusted|non[- ]gaap|"
                         r"compare|driv|why|which", re.I)


def amount_ask(question: str) -> RatioAsk | None:
    """One line item of one fiscal year's statements, or None."""
    q = " ".join(question.replace("’", "'").split())
    if not (_AMOUNT_Q.search(q) and _FISCAL.search(q)) or _NOT_AMOUNT.search(q) or \
            _A_TO_B.search(q):
        return None
    for name, pat, formula in AMOUNTS:
        m = re.search(pat, q, re.I)
        if m:
            return RatioAsk(name, formula, False, None, amount=True, label=norm_label(m.group(0)))
    return None


_CHANGE = re.compile(r"\b(?:change|growth|grow|increase|decrease|decline)\b", re.I)
_NOT_CHANGE = re.compile(r"ratio|margin|per share|quarter|\bq[1-4]\b|three months|segment|"
                         r"adjusted|non[- ]gaap|driv|why|which|compare|average|(?:percent|%) of|"
                         r"increase or decrease|"
                         r"^\W*(?:did|does|do|has|have|is|was|were)\b", re.I)  # a yes or no
_AS_RATE = re.compile(r"percent|%|growth rate|rate of (?:growth|change|increase|decrease)", re.I)


def change_ask(question: str) -> RatioAsk | None:
    """The change of one line item from one fiscal year to the next (or the years named),
    in percent when the question asks for a rate, else in its amount; or None."""
    q = " ".join(question.replace("’", "'").split())
    if not (_CHANGE.search(q) and _FISCAL.search(q)) or _NOT_CHANGE.search(q) or \
            _A_TO_B.search(q):
        return None
    years = sorted(set(_YEAR_IN.findall(q)))
    if len(years) == 1:
        years = [str(int(years[0]) - 1), years[0]]
    if len(years) != 2:
        return None
    for name, pat, formula in AMOUNTS:
        found = re.search(pat, q, re.I)
        if found:
            how = "percent" if _AS_RATE.search(q) else "absolute"
            return RatioAsk(name, formula, how == "percent", asked_decimals(q),
                            amount=how == "absolute",
                            label=norm_label(found.group(0)), years=years, change=how)
    return None

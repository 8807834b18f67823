"""Sample documents shared by the tests of document layouts."""

FENCE = "`" * 3
MARKDOWN = f"""# Install
1. Clone the repo.
2. Run `pip install -e .` in the root. It takes a minute.
   - On Windows use `py -m pip`.
- [ ] Add tests
- [x] Write docs

{FENCE}python
x = compute(a, b)  # returns the sum. Do not call twice.

y = 2
{FENCE}

| flag | meaning |
|---|---|
| `-o` | Output file. Written atomically. |
"""

EMAIL = """Hi Sarah,

Thanks for sending the Q3 numbers. I had a look at the spreadsheet and a few things stood out:
- Revenue in the E.U. grew 4.5% vs. the U.S. at 2.1%
- Headcount is flat

Can we talk on Tue. at 3 p.m.? If not, Wed. works too.

Best,
Tom
--
Tom Becker, Ph.D.
Senior Analyst, Acme Corp.
tom.becker@acme.example | +1 (555) 010-2000"""  # docs/annotation.md's worked example

"""Whether a job a question asks for was said."""

from __future__ import annotations

from memgraph.retrieval.occupations import asks_job, names_a_job


def test_a_job_question_is_told_by_its_wording() -> None:
    assert asks_job("What does Riaan do for a living?")
    assert asks_job("What does Precious's son Mtho do for work?")
    assert asks_job("What is Ana's job?")
    assert asks_job("What does Dan do?")
    # where someone works, or what they do at a weekend, is asked otherwise
    assert not asks_job("Where does Dan work?")
    assert not asks_job("What does Dan do on Sundays?")


def test_a_job_is_named_by_its_name_or_its_shape() -> None:
    assert names_a_job(["a younger brother, Euan, he's a fisherman out of Oban"])
    assert names_a_job(["he teaches geography. secondary school in Cabra"])
    assert names_a_job(["A jeweller from Kottayam town, Mathew Chacko"])
    assert names_a_job(["she's a florist now, loves it"])
    # spoken of, the job never said
    assert not names_a_job(["Riaan's lovely, we met at Femke's birthday", "he works a lot"])

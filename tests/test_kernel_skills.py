import pytest

import agrun
from agrun import ConfigError, DuplicateSkillError, EchoSkill, FunctionSkill, UnknownSkillError
from conftest import make_runtime


async def answer(input, context, helpers):
    return f"{context.state.selected_skill}: {input}"


def starts_with(prefix: str):
    return lambda text: text.startswith(prefix)


WEATHER = FunctionSkill("weather", answer, description="forecasts", applies=starts_with("weather"))
WEATHER_TODAY = FunctionSkill("weather_today", answer, applies=starts_with("weather today"))
PLAIN = FunctionSkill("plain", answer)


def decide_steps(result: agrun.RunResult) -> list[tuple[str | None, str]]:
    return [(step.skill, step.detail) for step in result.steps if step.action == "select_skill"]


async def test_echo_is_the_default_skill() -> None:
    runtime = make_runtime()
    result = await runtime.run("hello")
    assert result.output == "echo: hello"
    assert runtime.skill_names == ("echo",)
    assert runtime.default_skill == "echo"
    assert decide_steps(result) == [
        ("echo", "default: no matcher applies, so the default skill 'echo'")
    ]


async def test_an_explicit_skill_wins_over_matchers() -> None:
    runtime = make_runtime(WEATHER, PLAIN)
    result = await runtime.run("weather now", skill="plain")
    assert result.output == "plain: weather now"
    assert decide_steps(result) == [("plain", "explicit: the caller asked for 'plain'")]
    assert result.state.oodae.cycles[0].orient.requested_skill == "plain"  # type: ignore[union-attr]


async def test_the_first_registered_matching_skill_wins() -> None:
    runtime = make_runtime(WEATHER, WEATHER_TODAY)
    result = await runtime.run("weather today?")
    assert result.output == "weather: weather today?"
    orient = result.state.oodae.cycles[0].orient
    assert orient is not None
    assert orient.candidates == ("weather", "weather_today")
    assert decide_steps(result) == [
        ("weather", "matched: 'weather' is the first registered skill whose matcher applies")
    ]


async def test_registration_order_is_the_tie_break() -> None:
    runtime = make_runtime(WEATHER_TODAY, WEATHER)
    result = await runtime.run("weather today?")
    assert result.state.selected_skill == "weather_today"


async def test_no_match_falls_back_to_the_default() -> None:
    runtime = make_runtime(WEATHER, PLAIN, default_skill="plain")
    result = await runtime.run("hello")
    assert result.output == "plain: hello"
    assert runtime.skill_names == ("weather", "plain")


async def test_a_default_skill_object_is_registered() -> None:
    runtime = make_runtime(WEATHER, default_skill=PLAIN)
    assert runtime.skill_names == ("weather", "plain")
    assert (await runtime.run("hi")).output == "plain: hi"


async def test_unknown_skill_lists_the_known_ones_and_changes_nothing() -> None:
    events: list[object] = []
    runtime = make_runtime(WEATHER, on_event=events.append)
    with pytest.raises(UnknownSkillError) as caught:
        await runtime.run("hi", skill="wether")
    assert str(caught.value) == "no skill named 'wether'; registered skills: 'weather', 'echo'"
    assert caught.value.known == ("weather", "echo")
    assert events == []
    assert runtime.state.last_run is None
    assert (await runtime.run("hi")).state.run_id == "run-1"


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(DuplicateSkillError, match="two skills are named 'weather'"):
        make_runtime(WEATHER, FunctionSkill("weather", answer))


def test_a_skill_named_like_the_default_clashes() -> None:
    with pytest.raises(DuplicateSkillError, match="'echo'"):
        make_runtime(FunctionSkill("echo", answer))


def test_a_listed_default_object_is_not_registered_twice() -> None:
    runtime = make_runtime(PLAIN, default_skill=PLAIN)
    assert runtime.skill_names == ("plain",)


def test_default_skill_name_must_be_registered() -> None:
    with pytest.raises(UnknownSkillError, match="no skill named 'nope'"):
        make_runtime(WEATHER, default_skill="nope")


class NoRun:
    name = "norun"
    description = ""


class BadName:
    name = " padded "
    description = ""

    async def run(self, input, context, helpers):
        return None


@pytest.mark.parametrize(
    ("skill", "message"),
    [
        (object(), r"skills\[0\].name must be a non-empty string"),
        (BadName(), r"skills\[0\].name must be a non-empty string without edge spaces: ' padded '"),
        (NoRun(), r"skills\[0\] \('norun'\) needs a callable run"),
        (FunctionSkill("x", answer, description=3), "needs a string description"),  # type: ignore[arg-type]
        (FunctionSkill("x", answer, applies="yes"), "applies must be callable"),  # type: ignore[arg-type]
        (FunctionSkill("x", answer, timeout_s=0), "timeout_s must be a positive number: 0"),
        (FunctionSkill("x", answer, timeout_s=True), "timeout_s must be a positive number"),
    ],
)
def test_malformed_skills_are_refused(skill: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_runtime(skill)


def test_skills_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match="skills must be a list of skills, got str"):
        agrun.create_runtime(skills="echo")  # type: ignore[arg-type]


def raising_matcher(text: str) -> bool:
    raise ValueError("cannot tell")


@pytest.mark.parametrize(
    ("applies", "message"),
    [
        (raising_matcher, "skill 'picky' matcher raised ValueError: cannot tell"),
        (lambda text: "yes", "skill 'picky' matcher returned str, not a bool"),
    ],
)
async def test_a_broken_matcher_fails_the_run(applies: object, message: str) -> None:
    runtime = make_runtime(FunctionSkill("picky", answer, applies=applies))  # type: ignore[arg-type]
    result = await runtime.run("hi")
    assert result.state.status == "failed"
    assert result.error is not None
    assert result.error.to_wire() == {
        "code": "matcher_error",
        "message": message,
        "skill": "picky",
        "phase": "orient",
        "cycle": 1,
    }
    assert (await runtime.run("hi", skill="echo")).output == "echo: hi"


class ClassSkill:
    """A skill written as a class, the way the JavaScript bridge wraps one."""

    name = "klass"
    description = "a class-based skill"

    def applies(self, text: str) -> bool:
        return text == "klass"

    async def run(self, input, context, helpers):
        return {"skill": self.name}


class Promise:
    """An awaitable that is not a coroutine, like a JavaScript promise seen from Pyodide."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self):
        yield from ()
        return self.value


async def test_a_class_skill_with_a_matcher_runs() -> None:
    runtime = make_runtime(ClassSkill())
    assert (await runtime.run("klass")).output == {"skill": "klass"}


async def test_run_may_return_any_awaitable() -> None:
    skill = FunctionSkill("promise", lambda input, context, helpers: Promise([input]))
    runtime = make_runtime(skill)
    assert (await runtime.run("x", skill="promise")).output == ["x"]


async def test_run_may_return_the_output_directly() -> None:
    skill = FunctionSkill("sync", lambda input, context, helpers: input.upper())
    runtime = make_runtime(skill)
    assert (await runtime.run("x", skill="sync")).output == "X"


def test_echo_skill_satisfies_the_protocol() -> None:
    assert isinstance(EchoSkill(), agrun.Skill)
    assert isinstance(PLAIN, agrun.Skill)

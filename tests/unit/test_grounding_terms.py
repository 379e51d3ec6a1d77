"""The grounding check's reading of a claim (issue 25): names with a digit, hyphens, word forms, figures, and
the words that reverse a statement; and a "ROS 2" claim grounded on a chunk that writes "ROS2"."""

from __future__ import annotations

from bookrag.answering.answerers.base import Draft
from bookrag.answering.answerers.grounding import ground
from bookrag.answering.answerers.support import Evidence, lexical
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.text.claims import TermIndex, claim_terms, numbers
from bookrag.text.polarity import reverses, swaps


def hit(text: str) -> SearchHit:
    payload = ChunkPayload.from_dict({"content_text": text, "source_file": "appendices/lab.md", "chunk_index": 0,
                                      "total_chunks": 1, "section_heading": "Module 1", "source_url": "/lab"})
    return SearchHit("c1", 0.8, 0.8, payload)


def test_ros_2_written_either_way_is_one_name_and_no_figure() -> None:
    assert claim_terms("ROS 2 nodes") == claim_terms("ROS2 nodes") == claim_terms("ROS-2 nodes")
    assert numbers("ROS 2 Humble targets Ubuntu 22.04") == {"22.04"}


def test_a_ros_2_claim_is_grounded_on_a_chunk_that_writes_ros2() -> None:
    chunk = hit("- **Development Workstations**: Module 1 workstations come with a full ROS2 setup.")
    draft = Draft("Its workstations use ROS 2 [S1].", citations={"S1": "c1"})

    grounded, (verdict,) = ground(draft, {"c1": chunk})

    assert not grounded.refused and verdict.kept and verdict.spans


def test_hyphens_split_and_word_forms_fold() -> None:
    book = TermIndex(claim_terms("Simulation based validation keeps the robot stable and safe"))
    assert all(book.has(t) for t in claim_terms("Simulation-Based stability, safely"))
    assert not TermIndex(claim_terms("robust")).has(claim_terms("robot")[0])


def test_framing_words_are_not_claims() -> None:
    assert claim_terms("According to the book, the chapter notes that DART is recommended") == ["dart"]


def test_figures_are_read_as_written_and_in_words() -> None:
    assert numbers("$15,000 - $50,000, 4-12 weeks") == {"15000", "50000", "4", "12"}
    assert numbers("six components") == {"6"} and numbers("one of the remedies") == set()


def test_reversals_are_seen_and_paraphrases_are_not() -> None:
    book = "URDF is well-integrated with ROS 2 tools. Almost every ROS tool reads it."
    assert reverses("URDF has little tooling support, so few ROS tools can read it.", [book])
    assert reverses("URDF is poorly integrated with ROS 2 tools.", [book])
    assert reverses("CPGs need rhythmic inputs.", ["CPGs produce rhythmic outputs without rhythmic inputs."])
    assert reverses("ODE is unstable.", ["ODE: Older but stable"])
    assert not reverses("CPGs produce rhythmic outputs with no rhythmic input.",
                        ["CPGs produce rhythmic outputs without rhythmic inputs."])
    assert not reverses("It installs in a few minutes.", ["They install in a few minutes."])
    assert not reverses("Python files are linked, not copied.", ["It links Python files instead of copying them."])
    assert not reverses("Closed-loop control uses feedback.",
                        ["Open-loop control operates without feedback.", "Closed-loop control uses sensor feedback."])


def test_a_table_value_given_to_the_wrong_column_is_a_swap() -> None:
    row = "Asset Creation (Unity: Easy; Gazebo: Complex; Other Platforms: Varies)."
    assert swaps("Unity makes asset creation complex, whereas Gazebo makes it easy.", row)
    assert not swaps("Creating assets is easy in Unity but complex in Gazebo.", row)
    assert swaps("Topics are blocking, like services.", "Blocking (Topics: No; Services: Yes (sync); Actions: No).")


RECORD = "Each record has the following fields:\n\n- **key**: a unique identifier\n- **payload**: the stored bytes\n" \
         "- **stamp**: the time of the last write\n"


def test_a_count_in_words_is_held_by_a_cited_list_of_that_many_items() -> None:
    # GIVEN a chunk whose list has three items and never writes "three"
    evidence = [Evidence.of(hit(RECORD))]

    # THEN "three fields" is a count the list holds; "four fields" is a figure the book does not state
    assert lexical("Each record has three fields: key, payload and stamp.", evidence).numbers_found
    four = lexical("Each record has four fields: key, payload and stamp.", evidence)
    assert not four.numbers_found and four.counts_missing and not four.digits_missing


def test_a_negated_negative_verb_says_the_plain_thing_and_general_antonyms_reverse() -> None:
    # "Don't forget X" and "never ignore X" tell the reader to mind X, as the book does
    assert not reverses("Don't forget resources: CPU or memory problems hurt performance.",
                        ["Monitor resources: CPU or memory problems hurt performance."])
    assert not reverses("Never ignore the warnings.", ["Read the warnings."])
    # General English pairs beyond the first list
    assert reverses("Subsystems should be tightly coupled.", ["Subsystems should be loosely coupled."])
    assert reverses("Set the flag explicitly.", ["The flag is set implicitly."])


def test_aligned_polarity_reads_a_negator_on_one_side_of_the_clauses_that_say_the_same_thing() -> None:
    from bookrag.text.polarity import aligned_polarity

    book = ["Do not approach the robot until the safety reset is verified."]
    # The book's clause holds a negator, the claim's aligned clause does not: a reversal.
    assert aligned_polarity("Approach the robot once the safety reset is verified.", book) == (0.0, 1.0)
    # Both hold one: the same polarity, whichever negator each uses.
    assert aligned_polarity("Never approach the robot before the safety reset is verified.", book) == (0.0, 0.0)
    # The claim negates a clause the book states plainly.
    assert aligned_polarity("Custom messages are not compiled during the build.",
                            ["Custom messages are compiled during the build process."]) == (1.0, 0.0)
    # A negated clause of the claim that aligns with nothing in the book (its own explanation) counts for neither.
    assert aligned_polarity("Custom messages are compiled during the build, but you don't write their parsers by hand.",
                            ["Custom messages are compiled during the build process."]) == (0.0, 0.0)


def test_aligned_polarity_reads_the_half_the_book_affirms_as_affirmed() -> None:
    from bookrag.text.polarity import aligned_polarity

    book = ["The `--symlink-install` flag links Python files instead of copying them."]
    # "X instead of Y" negates Y only: a claim that states X says what the book says.
    assert aligned_polarity("Python files are then linked.", book) == (0.0, 0.0)
    assert aligned_polarity("The flag copies the Python files.", book) == (0.0, 1.0)


def test_a_negated_restrictor_or_comparative_narrows_the_statement_and_does_not_reverse_it() -> None:
    from bookrag.text.polarity import aligned_polarity

    book = ["The robot connects over 5G, Wi-Fi and Ethernet."]
    # "not ... alone", "not everything", "no less than": part of the statement still holds, as the book says.
    assert not reverses("The robot doesn't connect over Wi-Fi alone.", book)
    assert aligned_polarity("The robot doesn't connect over Wi-Fi alone.", book) == (0.0, 0.0)
    assert not reverses("The IMU updates at no less than 100 Hz.", ["The IMU updates at a rate of at least 100 Hz."])
    assert not reverses("The vendor isn't responsible for everything in the cloud.",
                        ["The vendor is responsible for the security of the cloud."])
    # A plain negation still reverses, and "less" alone still negates.
    assert reverses("The robot doesn't connect over Wi-Fi.", book)
    assert reverses("The IMU needs less calibration.", ["The IMU needs calibration before each run."])


def test_a_size_written_with_an_x_states_its_figures() -> None:
    assert numbers("a single 3x3 matrix") == {"3"} and numbers("a 4×4 matrix") == {"4"}
    book = Evidence.of(hit("Homogeneous coordinates combine a rotation and a translation in one 4x4 matrix."))

    changed = lexical("Homogeneous coordinates combine a rotation and a translation in one 3x3 matrix.", [book])
    same = lexical("Rotation and translation go into a single 4x4 matrix.", [book])

    assert changed.digits_missing and not changed.numbers_found
    assert same.numbers_found and not same.digits_missing


def test_a_negator_in_a_condition_states_the_case_not_that_it_holds() -> None:
    from bookrag.text.polarity import aligned_polarity

    book = ["The standard messages fit most applications.", "Custom messages are defined in .msg files."]
    # "When none of these fit, ...": the claim does not say that they never fit.
    assert not reverses("When none of the standard messages fit your application, you define custom ones.", book)
    assert aligned_polarity("If the standard messages don't fit your application, define custom ones.", book)[0] == 0.0
    # The same negator outside a condition does.
    assert reverses("None of the standard messages fit most applications.", book)


def test_a_count_in_words_is_held_by_the_items_the_claim_names() -> None:
    # A series the book writes in one sentence
    book = Evidence.of(hit("The cost is minimised subject to the model. Where l is the stage cost, l_f is the terminal "
                           "cost, f represents system dynamics, and g represents constraints."))

    four = lexical("The formulation has four parts: a stage cost, a terminal cost, the dynamics and the constraints.",
                   [book])
    five = lexical("The formulation has five parts: a stage cost, a terminal cost, the dynamics and the constraints.",
                   [book])

    assert four.numbers_found and not four.counts_missing
    assert five.counts_missing and not five.numbers_found
    # A count that is not the claim's own list ("for three years") is not held by a series of three.
    series = Evidence.of(hit("It is fast, cheap and reliable."))
    assert lexical("The terms are kept for three years.", [series]).counts_missing
    # The items in two lists of two (no list of four): the claim counts what it names, each item a term to find.
    split = Evidence.of(hit("Read with:\n\n- **peek**: look\n- **fetch**: take\n\nWrite with:\n\n- **store**: keep\n"
                            "- **erase**: drop\n"))
    assert not lexical("The cache has four calls: peek, fetch, store and erase.", [split]).counts_missing
    assert lexical("The cache has five calls: peek, fetch, store and erase.", [split]).counts_missing


def test_a_claim_that_allows_or_asks_what_the_book_forbids_is_a_reversal() -> None:
    from bookrag.text.stance import contradicts

    book = Evidence.of(hit("Avoid opening the kiln door while it is hot. The guide recommends against running the "
                           "glaze tests as root."))
    # Permission or obligation against a prohibition written without a negator ("avoid", "recommend against").
    assert lexical("Trainees may open the kiln door while it is hot.", [book]).reversed
    assert lexical("The guide recommends running the glaze tests as root.", [book]).reversed
    # The same stance, and an obligation that bears on something else, are not.
    assert not lexical("Trainees should avoid opening the kiln door while it is hot.", [book]).reversed
    assert not contradicts("Trainees should wait outside the spray booth during a run.",
                           ["Do not enter the spray booth during a run."])
    # "Must not" forbids; "need not" only waives, so a claim that permits is not against it.
    assert contradicts("Visitors can enter the welding bay.", ["Visitors must not enter the welding bay."])
    assert not contradicts("Visitors can wear gloves in the welding bay.",
                           ["Visitors need not wear gloves in the bay."])


def test_a_claim_that_something_still_holds_against_the_book_saying_it_no_longer_does_is_a_reversal() -> None:
    from bookrag.text.stance import contradicts

    book = Evidence.of(hit("The legacy launch API is no longer supported in current releases."))

    assert lexical("The legacy launch API is still supported in current releases.", [book]).reversed
    assert lexical("Current releases continue to support the launch API.",
                   [Evidence.of(hit("The launch API is deprecated in current releases."))]).reversed
    # The same stance on both sides, and "legacy" as a name, are not.
    assert not contradicts("Current releases no longer support the legacy launch API.",
                           ["The legacy launch API is no longer supported in current releases."])
    assert not contradicts("The legacy launch API is supported in current releases.",
                           ["The legacy launch API is supported in current releases."])


def test_a_negating_prefix_reverses_by_the_stem_it_leaves_in_any_word_form() -> None:
    # The book's word in another form: no antonym list holds the pair, the stem under the prefix tells
    assert reverses("The store invokes its reducer asynchronously.", ["The store runs the root reducer synchronously."])
    assert reverses("The vendor's drivers are unreliable.", ["The vendor's drivers are known for their reliability."])
    assert reverses("Reducers are synchronous.", ["Reducers are asynchronous."])  # the book's prefix, the claim plain
    # Not a prefix: a short tail of another word, or a passage that speaks of both forms
    assert not reverses("The cable runs across the room.", ["The cables cross the room."])
    assert not reverses("Actions are asynchronous.", ["Services are synchronous; actions are asynchronous."])


def test_a_multiple_written_as_a_word_or_with_an_x_is_a_figure() -> None:
    assert numbers("twice as fast") == {"2"} and numbers("2x faster") == {"2"} and numbers("0.8x real time") == {"0.8"}
    assert numbers("tripled the throughput") == {"3"} and numbers("two short double support phases") == {"2"}
    assert claim_terms("2x faster") == ["faster"]
    book = Evidence.of(hit("Active perception made grasping 3x more reliable in the lab."))

    changed = lexical("Active perception made grasping twice as reliable.", [book])
    same = lexical("Grasping was three times more reliable with active perception.", [book])

    assert changed.digits_missing and not changed.numbers_found
    assert same.numbers_found


def test_a_figure_written_against_its_unit_is_a_figure() -> None:
    # The book writes "60fps" and "100Hz+": a claim's "60 fps" states the figure the book holds, "30 fps" does not.
    assert numbers("Cameras: 1080p minimum, 60fps; LiDAR: 0.15m to 25m, 10Hz+ scan rate") == \
        {"1080", "60", "0.15", "25", "10"}
    assert numbers("a 3D map, the 2nd edition") == set()
    book = hit("- **IMU**: 9-axis, 100Hz+ update rate\n- **Cameras**: 1080p minimum, 60fps for real-time vision")
    assert lexical("Cameras should be 1080p at 60 fps.", [Evidence.of(book)]).numbers_found
    assert not lexical("Cameras should be 1080p at 30 fps.", [Evidence.of(book)]).numbers_found


def test_a_verb_that_prevents_or_avoids_negates_what_it_governs() -> None:
    # "prevent interference" says what "don't interfere" says; "enables interference" says the opposite.
    book = ["DDS domains partition communication to prevent interference between different applications."]
    assert not reverses("DDS domains partition communication so that different applications don't interfere.", book)
    assert reverses("DDS domains partition communication so that different applications interfere.", book)
    assert not reverses("Reducers don't mutate the state.", ["Reducers avoid mutating the state."])


def test_a_negation_the_book_makes_too_is_no_reversal_however_far_each_negator_reaches() -> None:
    # GIVEN a book that negates the tie, with one more word inside its negator's reach than the claim has
    book = ["The kiln is not strictly tied to any particular glaze supplier.",
            "You are free to use any glaze supplier that you prefer."]

    # THEN the claim that negates it too says the same thing; the claim that affirms it reverses it
    assert not reverses("The kiln isn't strictly tied to any glaze supplier, so use whichever one you prefer.", book)
    assert reverses("The kiln is strictly tied to one glaze supplier.", book)
    # A negator that reaches another term than the book's does not agree with it
    spring = ["The spring's flexibility contributes to efficient motion without requiring complex control signals."]
    assert reverses("The spring's flexibility makes motion less efficient unless complex control signals are added.",
                    spring)


def test_a_contrast_negates_what_it_sets_apart_not_the_ground_both_sides_share() -> None:
    book = ["Each worker receives a shallow copy of the settings."]
    # "copy" is stated on both sides of "not": the claim negates "deep", which the book never says
    assert not reverses("Each worker receives only a shallow copy of the settings, not a deep copy.", book)
    assert reverses("Workers do not receive a copy of the settings.", book)

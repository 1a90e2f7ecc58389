"""The package data that pyproject.toml cannot declare: the checkout's top-level configs/, models/ and
examples/ ship inside the package as ``truc_env/_shipped/<folder>``, where ``truc_env.io.assets`` finds them
by name once installed (``--config arena/paulista``, ``net:le_truc``). Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

SHIPPED = {"configs": ["*.md", "*.yaml", "*/*.yaml", "*/*.sh"], "models": ["*.md", "*.pt", "*.yaml"],
           "examples": ["*.json"]}

setup(
    packages=find_packages(include=["truc_env*", "agents*", "train*"]) + [f"truc_env._shipped.{k}" for k in SHIPPED],
    package_dir={f"truc_env._shipped.{k}": k for k in SHIPPED},
    package_data={**{f"truc_env._shipped.{k}": v for k, v in SHIPPED.items()},
                  "train.web": ["static/*"]},  # the web table's page, served by `truc serve`
)

#!/usr/bin/env bash
# Copies the Excel-saved benchmark workbook out of a git copy of its project
# (README.md says which, and its licence).
# Usage: bash fetch.sh [GIT_DIR of ExcelDataReader/ExcelDataReader] (default:
# the tool library's mirror; a clone's .git works as well).
set -euo pipefail
cd "$(dirname "$0")"
git_dir="${1:-/work/.mirror/ExcelDataReader+ExcelDataReader/repo}"
commit=250bb0178eee7a32d205397379557c82c1bfe837
git --git-dir="$git_dir" show "$commit:src/TestData/Test10x10000.xlsx" >test10x10000.xlsx
git --git-dir="$git_dir" show "$commit:LICENSE" >LICENSE
echo "91e7b6b77f49026a3ebbe532de8b1ff503881b11dfa3e0da9ee10648e6b101d3  test10x10000.xlsx" |
    sha256sum --check --quiet

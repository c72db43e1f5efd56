// Set operations on sorted CPU lists, as doctor compares affinities with the
// focus CPUs everywhere.
#pragma once

#include <vector>

namespace gpunoise::doctor {

std::vector<int> Intersect(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> Subtract(const std::vector<int>& a, const std::vector<int>& b);
std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b);
bool Overlaps(const std::vector<int>& a, const std::vector<int>& b);
bool IsSubset(const std::vector<int>& sub, const std::vector<int>& super);

}  // namespace gpunoise::doctor

// Quiz buttons of the `quiz` directive (_ext/hwquiz.py): a click marks the choice right or wrong
// and reveals the explanation once the right answer is found. No kernel, no network.
document.addEventListener("click", function (event) {
  const button = event.target.closest(".hw-quiz-option");
  if (!button) return;
  const quiz = button.closest(".hw-quiz");
  const feedback = quiz.querySelector(".hw-quiz-feedback");
  const explain = quiz.querySelector(".hw-quiz-explain");
  const right = button.dataset.correct === "true";
  button.classList.add(right ? "hw-quiz-right" : "hw-quiz-wrong");
  button.setAttribute("aria-pressed", "true");
  feedback.textContent = right ? "✓ Correct." : "✗ Not quite — try another option.";
  feedback.className = "hw-quiz-feedback " + (right ? "hw-quiz-right" : "hw-quiz-wrong");
  if (right && explain && explain.textContent.trim()) explain.hidden = false;
});

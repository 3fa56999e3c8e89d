//! What the role pipeline's end-to-end tests share: which role a model request belongs to.

use ganger_fake_llm::RecordedRequest;

/// The role whose session `request` belongs to: named in the session's first prompt of
/// ganger's (an agent may put context of its own before it).
pub fn role_of(request: &RecordedRequest) -> String {
    let conversation = request.conversation.as_ref().unwrap();
    let prompts = conversation.prompts();
    prompts
        .iter()
        .find_map(|p| {
            p.split_once("# Your role: ")
                .map(|(_, rest)| rest.lines().next().unwrap_or("").to_owned())
        })
        .unwrap_or_else(|| panic!("a request of no role: {prompts:?}"))
}
